"""An HTTP client authorised as one connection, for the tools that use an app."""

import httpx

from connections.actions import do_fresh_access_token
from connections.models import Connection

TIMEOUT_SECONDS = 30


def authorised_client(connection: Connection, *, for_run=None) -> httpx.Client:
    """An ``httpx.Client`` for the app's API (requests relative to its base URL), carrying the
    connection's access token, refreshed first if it had expired. Raises
    ``ConnectionUnusableError`` (``connections.exceptions``) when the connection is revoked or the
    app will not refresh it. ``for_run``: the run that uses it (noted among its uses)."""
    token = do_fresh_access_token(connection.pk, for_run=for_run)
    return httpx.Client(
        base_url=connection.app.api_base_url,
        headers={"Authorization": f"Bearer {token}"},
        timeout=TIMEOUT_SECONDS,
    )
