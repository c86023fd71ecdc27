"""Journal entries as events for the run's channel group and its parent's (runs.journal sends them)."""

from datetime import datetime
from typing import Any, Protocol

from runs.models import Run


class Recorded(Protocol):
    """A journal entry: read from the journal, or as ``runs.journal`` just wrote it."""

    sequence: int
    kind: str
    node_id: str
    created_at: datetime
    duration_ms: int | None
    payload: Any


def run_group(run_id) -> str:
    return f"run.{run_id}"


def entry_event(run: Run, entry: Recorded) -> dict:
    return {
        "type": "journal.entry",
        "runId": str(run.pk),
        "runStatus": run.status,
        "entry": {
            "sequence": entry.sequence,
            "kind": entry.kind,
            "nodeId": entry.node_id,
            "time": entry.created_at.isoformat().replace("+00:00", "Z"),
            "durationMs": entry.duration_ms,
            "payload": entry.payload,
        },
    }
