"""Execute or resume one run: claim it, run its flow or agent turn, record how it ended."""

import logging
from uuid import UUID, uuid4

from runs import actions
from runs.engine.agent import AgentTurnExecution
from runs.engine.flow import FlowExecution
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
    token = uuid4().hex
    run = actions.do_claim_run(run_id, token=token)
    if run is None:
        return
    try:
        execution = _execution_for(run, token)
        if execution is None:
            target = (
                f"agent {run.agent_key}@{run.agent_version}"
                if run.is_agent_turn
                else f"flow {run.flow_key}@{run.flow_version}"
            )
            outcome: Outcome = Failed(message=f"definition-missing: {target} is no longer in the packs")
        else:
            outcome = execution.execute()
    except LostClaimError:
        return  # cancelled, or another executor took over: it is theirs now
    except Exception as error:
        logger.exception("run %s: the engine failed", run_id, extra={"run_id": str(run_id)})
        # The traceback goes to the log; the run keeps the message.
        outcome = Failed(message=f"internal-error: {type(error).__name__}: {error}")
    try:
        actions.do_finish_run(run_id, token=token, outcome=outcome)
    except LostClaimError:
        return
