"""An agent turn's conversation as it stands, for the API and the console to show.

A turn writes its conversation when it takes its first step and when its run stops (waits or
ends); between, each step is in the journal. So the stored conversation is current for a run
that waits or completed, and a run that is on its way, or ended without its executor's last
write (cancelled, failed by a crash), is shown with the steps its journal holds since.
"""

from typing import Any

from runs.engine.conversation import caught_up, from_outside, tool_message
from runs.engine.state import RunState
from runs.models import Run, RunStatus
from runs.policy_context import agent_tools, target_of
from runs.selectors import run_journal
from tools.registry import get_registry

# Written when the run stopped in this status, with every step before it.
CURRENT_WHEN_STORED = frozenset({RunStatus.SUSPENDED, RunStatus.COMPLETED})


def conversation_of(run: Run) -> list[dict[str, Any]]:
    """``run``'s conversation, with the model's steps since it was last written."""
    # Nothing to add to: a flow, a run that stopped with its conversation written, or a turn
    # whose first step (which writes the conversation) is not written yet.
    if not run.is_agent_turn or run.status in CURRENT_WHEN_STORED or not run.messages:
        return run.messages
    state = RunState.fold(run_journal(run))
    if not state.replies_since_stop:
        return run.messages
    registry = get_registry()
    agent = target_of(run, registry)
    tools = {} if agent is None else agent_tools(agent, run.tenant_id, registry=registry)

    def result_message(call_id: str) -> dict[str, Any] | None:
        done = state.results.get(call_id)
        if done is None:
            return None
        outside = from_outside(done, tools.get(done.tool_id))
        return tool_message(call_id=call_id, tool_id=done.tool_id, result=done.result, outside_data=outside)

    return caught_up(run.messages, state.replies_since_stop, result_message)
