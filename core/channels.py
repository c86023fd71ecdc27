"""Sending events to channel groups: what the runs' and the approvals' live streams share.

Live events are best effort: the change they report is committed already, and a socket that
missed one reads it from the database when it reconnects. So a channel layer that does not
answer (Redis restarting) costs a log line, never the change or the request that made it.

A layer on a server (Redis) is sent to from one event loop of this process's own, on a thread
that lives as long as the process. ``async_to_sync`` called where no loop runs (a worker, a
sweep) would make a loop for each send, and the layer a new connection to Redis with it:
about 7 ms a send, three sends a suspension. The in-process layer stays on ``async_to_sync``,
so that its events reach the loop its sockets listen on.
"""

import asyncio
import logging
import threading
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger("kindgi.events")

SEND_TIMEOUT_SECONDS = 5

_sending_loop: asyncio.AbstractEventLoop | None = None
_sending_loop_lock = threading.Lock()


def _loop_for_sending() -> asyncio.AbstractEventLoop:
    global _sending_loop
    with _sending_loop_lock:
        if _sending_loop is None or _sending_loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="kindgi-live-events", daemon=True).start()
            _sending_loop = loop
        return _sending_loop


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
        if isinstance(layer, InMemoryChannelLayer):
            async_to_sync(send_all)()
        else:
            sending = asyncio.run_coroutine_threadsafe(send_all(), _loop_for_sending())
            sending.result(timeout=SEND_TIMEOUT_SECONDS)
    except Exception as error:  # Redis away, or any layer's failure: the change stands
        logger.warning("live events to %s not sent: %s: %s", ", ".join(groups), type(error).__name__, error)
