"""Sending events to channel groups: what the runs' and the approvals' live streams share."""

from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer


def send_to_groups(groups: list[str], events: Callable[[], list[dict]]) -> None:
    """Every event to every group, in order, in one trip to the channel layer.

    An in-process layer with nobody in these groups would drop them: then they are not even
    made. (A socket that joins a moment later replays what it missed from the database.)"""
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
