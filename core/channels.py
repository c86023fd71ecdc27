"""Sending events to channel groups: what the runs' and the approvals' live streams share.

Live events are best effort: the change they report is committed already, and a socket that
missed one reads it from the database when it reconnects. So a channel layer that does not
answer (Redis restarting) costs a log line, never the change or the request that made it.
"""

import logging
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger("kindgi.events")


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

    try:
        async_to_sync(send_all)()
    except Exception as error:  # Redis away, or any layer's failure: the change stands
        logger.warning("live events to %s not sent: %s: %s", ", ".join(groups), type(error).__name__, error)
