"""The port through which the engine's decisions become durable: the driver implements it.

The engine never writes itself. It hands entries (and an agent turn's conversation) to the
recorder as it goes, and its outcome to whoever called it; the driver (``runs.journal``)
writes them under the run's claim, so an executor that lost the run changes nothing.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kindgi import AgentDefinition
from runs.engine.entries import Entry

# A child run's statuses that end it, as the driver reports them.
CHILD_COMPLETED = "completed"
CHILD_ENDED_BADLY = frozenset({"failed", "cancelled"})


@dataclass(frozen=True, kw_only=True)
class ChildRun:
    """An agent step's run, as it stands after the recorder made (and perhaps executed) it."""

    id: str
    status: str
    output: Any = None
    failure_message: str = ""


class Recorder(Protocol):
    def record(self, entries: Sequence[Entry], *, messages_json: str | None = None) -> None:
        """Write ``entries`` (and the conversation, as JSON already made) durably, at once.
        Raises ``LostClaimError`` when the run is no longer this executor's."""

    def run_child(
        self, *, node_id: str, agent: AgentDefinition, input: dict[str, Any], entries: Sequence[Entry]
    ) -> ChildRun:
        """The agent step ``node_id``'s child run: made once (writing ``entries`` to this run
        with it), executed here if it is queued, and returned as it stands then."""

    def thread_finished(self) -> None:
        """The engine ran tools in a thread of its own, and that thread is done."""
