"""Journal entries to the run's channel group and its parent's (sent by runs.actions after commit)."""

from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

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


def send_to_groups(groups: list[str], events: Callable[[], list[dict]]) -> None:
    """Every event to every group, in order, in one trip to the channel layer.

    An in-process layer with nobody in these groups would drop them: then they are not even
    made. (A socket that joins a moment later replays the journal, which already holds them.)"""
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, InMemoryChannelLayer):
        groups = [group for group in groups if layer.groups.get(group)]
        if not groups:
            return
    made = events()

    async def send_all() -> None:
        for event in made:
            for group in groups:
                await layer.group_send(group, event)

    async_to_sync(send_all)()
