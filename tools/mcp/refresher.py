"""Listing the MCP servers again on a schedule, in each web and worker process.

A thread of the process does it every ``KINDGI_MCP_REFRESH_SECONDS`` (0 turns it off); each
refresh is safe to repeat and bounded by each server's timeout, so processes that refresh at
the same time only repeat one another. ``refresh_mcp_servers`` does the same on demand.
"""

import logging
import threading
import time

from django.db import connections

from core.conf import setting

logger = logging.getLogger("kindgi.mcp")

_lock = threading.Lock()
_started = False


def start_refresher() -> bool:
    """Start this process's refresher once; whether one runs."""
    global _started
    interval = setting("KINDGI_MCP_REFRESH_SECONDS")
    if not interval:
        return False
    with _lock:
        if not _started:
            threading.Thread(
                target=_refresh_every, args=(interval,), name="kindgi-mcp-refresh", daemon=True
            ).start()
            _started = True
    return True


def _refresh_every(interval: float) -> None:
    from tools.mcp.catalog import do_refresh_mcp_servers

    while True:
        time.sleep(interval)
        try:
            for report in do_refresh_mcp_servers():
                logger.info("%s", report)
        except Exception:  # a bad setting or a database blip: say so, and try again next time
            logger.exception("MCP servers: the scheduled refresh failed")
        finally:
            connections.close_all()
