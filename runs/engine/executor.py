"""Execute or resume one run: claim it, run its flow or agent turn, record how it ended."""

import logging
from uuid import UUID, uuid4

from kindgi_site.logs import about_run
from runs import actions
from runs.engine.agent import AgentTurnExecution
from runs.engine.flow import FlowExecution
from runs.engine.heartbeat import claim_held
from runs.engine.outcomes import Failed, Outcome
from runs.exceptions import LostClaimError
from runs.models import Run
from tools.registry import get_registry

logger = logging.getLogger("kindgi.runs")


def _execution_for(run: Run, token: str):
    registry = get_registry()
    if run.is_agent_turn:
        agent = registry.agent(run.agent_key, run.agent_version)
        if agent is None:
            return None
        return AgentTurnExecution(run, token=token, agent=agent, registry=registry)
    flow = registry.flow(run.flow_key, run.flow_version)
    if flow is None:
        return None
    return FlowExecution(run, token=token, flow=flow, registry=registry)


def execute(run_id: UUID) -> None:
    """Do nothing unless this call wins the run's claim; then take the run as far as it goes."""
    with about_run(run_id):
        _execute(run_id)


def _execute(run_id: UUID) -> None:
    token = uuid4().hex
    run = actions.do_claim_run(run_id, token=token)
    if run is None:
        logger.debug("run %s: not claimed (finished, or another executor holds it)", run_id)
        return
    target = (
        f"agent {run.agent_key}@{run.agent_version}"
        if run.is_agent_turn
        else f"flow {run.flow_key}@{run.flow_version}"
    )
    logger.info("run %s: executing %s", run_id, target)
    try:
        execution = _execution_for(run, token)
        if execution is None:
            outcome: Outcome = Failed(message=f"definition-missing: {target} is no longer in the packs")
        else:
            with claim_held(run.pk, token):  # however long a tool call takes
                outcome = execution.execute()
        entries, messages = execution.unrecorded() if execution is not None else ([], None)
        finished = actions.do_finish_run(
            run_id, token=token, outcome=outcome, entries=entries, messages=messages
        )
    except LostClaimError:
        # Cancelled, or another executor took over: the run is theirs now.
        logger.info("run %s: stopped here, its claim was lost", run_id)
        return
    except Exception as error:
        # The traceback goes to the log; the run keeps the message.
        logger.exception("run %s: the engine failed", run_id)
        outcome = Failed(message=f"internal-error: {type(error).__name__}: {error}")
        try:
            finished = actions.do_finish_run(run_id, token=token, outcome=outcome)
        except LostClaimError:
            return
    logger.info("run %s: %s", run_id, finished.status)
