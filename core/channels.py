"""Sending events to channel groups: what the runs' and the approvals' live streams share.

Live events are best effort: the change they report is committed already, and a socket that
missed one reads it from the database (when it reconnects, or when the entry after it comes).
So a channel layer that does not answer (Redis restarting) costs a log line, never the change
or the request that made it.

A layer on a server (Redis) is sent to from one event loop of this process's own, on a thread
that lives as long as the process, in the order the sends were asked for. The caller does not
wait for the server: a send is a few round trips to Redis, three or four for each step of a
run, which a worker would otherwise spend waiting before it takes its next step or task.
(``async_to_sync`` called where no loop runs, a worker or a sweep, would make a loop for each
send, and the layer a new connection to Redis with it: about 7 ms a send.) The in-process
layer stays on ``async_to_sync``, so that its events reach the loop its sockets listen on.
"""

import asyncio
import atexit
import logging
import threading
import time
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer

logger = logging.getLogger("kindgi.events")

SEND_TIMEOUT_SECONDS = 5
# Sends waiting for a layer that has stopped answering, beyond which new ones are dropped
# (each dropped one logged), rather than kept until the process runs out of memory.
MOST_WAITING_SENDS = 10_000
# How long a process that is ending waits for the sends it asked for to go out.
FLUSH_SECONDS = 2


class _Sender:
    """One event loop on a thread of its own, taking the sends one after another."""

    def __init__(self):
        self.loop = asyncio.new_event_loop()
        self.waiting: asyncio.Queue = asyncio.Queue()
        self.unsent = 0  # asked for and not yet done, read from other threads
        self.lock = threading.Lock()
        threading.Thread(target=self._run, name="kindgi-live-events", daemon=True).start()

    def _run(self) -> None:
        self.loop.run_until_complete(self._send_in_order())

    def send(self, layer, groups: list[str], events: list[dict]) -> None:
        with self.lock:
            if self.unsent >= MOST_WAITING_SENDS:
                logger.warning(
                    "live events to %s not sent: %d sends wait already", ", ".join(groups), self.unsent
                )
                return
            self.unsent += 1
        self.loop.call_soon_threadsafe(self.waiting.put_nowait, (layer, groups, events))

    async def _send_in_order(self) -> None:
        while True:
            layer, groups, events = await self.waiting.get()
            try:
                async with asyncio.timeout(SEND_TIMEOUT_SECONDS):
                    for event in events:
                        for group in groups:
                            await layer.group_send(group, event)
            except Exception as error:  # Redis away, or any layer's failure: the change stands
                logger.warning(
                    "live events to %s not sent: %s: %s", ", ".join(groups), type(error).__name__, error
                )
            finally:
                with self.lock:
                    self.unsent -= 1

    def flush(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for every send asked for so far; True if none is left."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            with self.lock:
                if self.unsent == 0:
                    return True
            time.sleep(0.01)
        return False


_sender: _Sender | None = None
_sender_lock = threading.Lock()


def _the_sender() -> _Sender:
    global _sender
    with _sender_lock:
        if _sender is None:
            _sender = _Sender()
            atexit.register(_sender.flush, FLUSH_SECONDS)
        return _sender


def flush_live_events(seconds: float = FLUSH_SECONDS) -> bool:
    """Wait up to ``seconds`` for the events this process has sent to a server's layer to go
    out; True if they have."""
    return _sender.flush(seconds) if _sender is not None else True


def send_to_groups(groups: list[str], events: Callable[[], list[dict]]) -> None:
    """Every event to every group, in order, in one trip to the channel layer; to a server's
    layer without waiting for it.

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
        except Exception as error:  # the change stands
            logger.warning(
                "live events to %s not sent: %s: %s", ", ".join(groups), type(error).__name__, error
            )
        return
    _the_sender().send(layer, groups, events())
