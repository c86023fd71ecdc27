"""Journal entries to the run's channel group and its parent's (sent by runs.actions after commit)."""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from runs.models import JournalEntry, Run


def run_group(run_id) -> str:
    return f"run.{run_id}"


def entry_event(run: Run, entry: JournalEntry) -> dict:
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


def send_to_groups(groups: list[str], event: dict) -> None:
    layer = get_channel_layer()
    if layer is None:
        return
    for group in groups:
        async_to_sync(layer.group_send)(group, event)
