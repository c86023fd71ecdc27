"""Listing the MCP servers again on a schedule, in each web and worker process.

A thread of the process does it every ``KINDGI_MCP_REFRESH_SECONDS`` (0 turns it off); each
refresh is safe to repeat and bounded by each server's timeout, so processes that refresh at
the same time only repeat one another. ``refresh_mcp_servers`` does the same on demand.
"""

import logging

from core.background import start_every
from core.conf import setting

logger = logging.getLogger("kindgi.mcp")


def start_refresher() -> bool:
    """Start this process's refresher once; whether one runs."""
    return start_every("kindgi-mcp-refresh", setting("KINDGI_MCP_REFRESH_SECONDS"), _refresh)


def _refresh() -> None:
    from tools.mcp.catalog import do_refresh_mcp_servers

    for report in do_refresh_mcp_servers():
        logger.info("%s", report)
