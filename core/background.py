"""Work a process does on its own every so often (listing MCP servers, the sweeps): one daemon
thread per kind of work, started once, that logs a failure and tries again next time."""

import logging
import threading
import time
from collections.abc import Callable

from django.db import connections

logger = logging.getLogger("kindgi")

_lock = threading.Lock()
_started: set[str] = set()


def start_every(name: str, interval: float, work: Callable[[], None]) -> bool:
    """Do ``work`` every ``interval`` seconds in a thread of this process named ``name``, started
    once however often this is called; whether it runs (an interval of 0: it does not)."""
    if not interval:
        return False
    with _lock:
        if name not in _started:
            threading.Thread(target=repeat, args=(interval, work, name), name=name, daemon=True).start()
            _started.add(name)
    return True


def repeat(interval: float, work: Callable[[], None], name: str) -> None:
    """Do ``work`` every ``interval`` seconds in this thread, for ever."""
    while True:
        time.sleep(interval)
        try:
            work()
        except Exception:  # a bad setting or a database blip: say so, and try again next time
            logger.exception("%s: this round failed; the next one tries again", name)
        finally:
            connections.close_all()
