"""Execute or resume one run: claim it, hand the engine what it needs, record how it ended.

The engine decides and the driver records: this module reads the run (its row, its journal
folded once, the policy context) and gives the engine a recorder that writes through
``runs.journal`` under the claim. A run id comes in; nothing here goes back up to the actions.
"""

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any
from uuid import UUID, uuid4

from django.db import InterfaceError, OperationalError, connections

from core.logcontext import about_run
from kindgi import AgentDefinition
from runs import dispatch, journal
from runs.budgets import RunBudgets, release_uncalled
from runs.engine.entries import Entry, EntryKind
from runs.engine.flow import FlowRun
from runs.engine.outcomes import Failed
from runs.engine.recorder import ChildRun
from runs.engine.state import RunState
from runs.engine.turn import AgentTurn
from runs.exceptions import LostClaimError
from runs.grants import grant_keeper
from runs.heartbeat import claim_held
from runs.model_resolution import resolve_model
from runs.models import Run, RunStatus
from runs.policy_context import policy_context, target_of, with_connections
from runs.selectors import run_journal
from runs.tracing import NO_TRACE, NoTrace, execution_trace
from tools.registry import get_registry

logger = logging.getLogger("kindgi.runs")


class JournalRecorder:
    """The engine's recorder for one execution: every write carries the executor's claim."""

    def __init__(
        self, run_id: UUID, token: str, budgets: RunBudgets | None = None, *, trace: NoTrace = NO_TRACE
    ):
        self.run_id = run_id
        self.token = token
        self.budgets = budgets
        self.trace = trace

    def record(self, entries: Sequence[Entry], *, messages_json: str | None = None) -> None:
        # Charges that wait for the run's next step (an approved call's) are written with it.
        pending = self.budgets.write_pending if self.budgets is not None and self.budgets.pending else None
        journal.do_record(
            self.run_id, token=self.token, entries=entries, messages_json=messages_json, also=pending
        )
        self.trace.recorded(entries)  # once durable: a call taken back is no span

    def run_child(
        self, *, node_id: str, agent: AgentDefinition, input: dict[str, Any], entries: Sequence[Entry]
    ) -> ChildRun:
        with self.trace.agent_step(node_id, agent):
            child = journal.do_get_or_create_child_run(
                parent_id=self.run_id,
                token=self.token,
                node_id=node_id,
                agent=agent,
                input=input,
                entries=entries,
            )
            if child.status == RunStatus.QUEUED:
                execute(child.pk)  # an agent step runs inside its flow's execution
                child.refresh_from_db()
        return ChildRun(
            id=str(child.pk), status=child.status, output=child.output, failure_message=child.failure_message
        )

    def thread_finished(self) -> None:
        connections.close_all()  # that thread's own connections, if its tool used the database


def _engine_for(run: Run, recorder: JournalRecorder, claim: journal.Claim) -> AgentTurn | FlowRun | None:
    """The engine for ``run``, its state folded from the journal and its policy context: each
    as the claim knows it already, or read now. Its connections are read now in any case."""
    registry = get_registry()
    target = target_of(run, registry)
    if target is None:
        return None
    journal_read = run_journal(run) if claim.journal is None else claim.journal
    state = RunState.fold(journal_read)
    if claim.context is None:
        ctx = policy_context(run, target, registry=registry)
    else:
        ctx = with_connections(claim.context, run, target, registry=registry)
    if claim.journal is None and _holds_memory(ctx) and _taken_over(journal_read):
        release_uncalled(run.pk)  # what the execution that died charged and never called
    # An execution's calls are charged to budgets, and use grants.
    ctx = replace(ctx, budgets=recorder.budgets, grant_keeper=grant_keeper())
    if run.is_agent_turn:
        choose_model = recorder.trace.chat_models(resolve_model)
        return AgentTurn(agent=target, state=state, ctx=ctx, recorder=recorder, choose_model=choose_model)
    return FlowRun(flow=target, registry=registry, state=state, ctx=ctx, recorder=recorder)


def execute(run_id: UUID) -> None:
    """Do nothing unless this call wins the run's claim; then take the run as far as it goes."""
    with about_run(run_id):
        token = uuid4().hex
        claim = journal.do_claim_run(run_id, token=token)
        if claim is None:
            logger.debug("run %s: not claimed (finished, or another executor holds it)", run_id)
            return
        _execute(claim, token)


def execute_claimed(claim: journal.Claim, token: str) -> Run | None:
    """Take a run this process claimed as it made it (``journal.start_claimed``) as far as it
    goes; return it as it then stands, or None if its claim was lost on the way."""
    with about_run(claim.run.pk):
        return _execute(claim, token)


def _execute(claim: journal.Claim, token: str) -> Run | None:
    run = claim.run
    run_id = run.pk
    target = (
        f"agent {run.agent_key}@{run.agent_version}"
        if run.is_agent_turn
        else f"flow {run.flow_key}@{run.flow_version}"
    )
    logger.info("run %s: executing %s", run_id, target)
    engine = None
    trace, outcome = NO_TRACE, None
    try:
        # The journal is known to the claim only when the run starts now: otherwise this goes
        # on from an earlier execution.
        trace = execution_trace(run, continued=claim.journal is None)
        with trace.running():
            engine = _engine_for(run, JournalRecorder(run.pk, token, RunBudgets(run), trace=trace), claim)
            if engine is None:
                outcome = Failed(message=f"definition-missing: {target} is no longer in the packs")
            else:
                with claim_held(run.pk, token):  # however long a tool call takes
                    outcome = engine.execute()
        entries, messages = engine.unrecorded() if engine is not None else ([], None)
        finished = journal.do_finish_run(
            run_id,
            token=token,
            outcome=outcome,
            entries=entries,
            messages=messages,
            parent_id=run.parent_id,
            tenant=run.tenant,
            claimed=run,
            resume=dispatch.resume_locked,
        )
        trace.recorded(entries)
    except LostClaimError:
        # Cancelled, or another executor took over: the run is theirs now.
        logger.info("run %s: stopped here, its claim was lost", run_id)
        trace.lost("claim-lost")
        return None
    except (OperationalError, InterfaceError) as error:
        # The database went away mid-run: the journal holds what was done. The claim expires
        # and recovery takes the run on from there; failing it would lose a run for a blip.
        logger.warning("run %s: left to recovery, the database failed: %s", run_id, error)
        trace.lost("database-failed")
        return None
    except Exception as error:
        # The traceback goes to the log; the run keeps the message.
        logger.exception("run %s: the engine failed", run_id)
        outcome = Failed(message=f"internal-error: {type(error).__name__}: {error}")
        try:
            finished = journal.do_finish_run(
                run_id, token=token, outcome=outcome, parent_id=run.parent_id, resume=dispatch.resume_locked
            )
        except LostClaimError:
            trace.lost("claim-lost")
            return None
        if engine is not None and _holds_memory(engine.ctx):
            release_uncalled(run_id)  # it may have failed between a charge and its call
    trace.ended(outcome, finished)
    logger.info("run %s: %s", run_id, finished.status)
    return finished


def _taken_over(entries: Sequence) -> bool:
    """Whether this execution goes on where another stopped mid-way (it died, or lost its
    database), rather than from the run's start or a resolved wait: only then may charges of
    calls it never made be left behind."""
    return bool(entries) and entries[-1].kind != EntryKind.WAIT_RESUMED


def _holds_memory(ctx) -> bool:
    """Whether the run's calls may have charged a budget or used a grant: only then has its end
    anything to give back (and a run of a tenant without either pays no statement for it)."""
    return bool(ctx.grants) or any(rule.budget is not None for rule in ctx.rules)
