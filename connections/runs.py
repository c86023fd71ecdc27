"""What connections are to runs: the waitpoint of a run that waits for its person to connect an
app, and the connection a call acts through."""

from functools import partial

from django.utils import timezone

from connections.actions import REFRESH_LEEWAY, do_fresh_access_token
from connections.clients import authorised_client
from connections.exceptions import ConnectionUnusableError
from connections.models import Connection
from kindgi import ToolConnection
from runs.calls import starter_of
from runs.models import Run


class ConnectionWaitpoints:
    """A run waiting for its person to connect an app records nothing more than its waitpoint:
    the person sees it on their connections page, and connecting resumes it."""

    def on_suspend(self, run: Run, waitpoint: dict) -> dict:
        return waitpoint

    def on_cancel(self, run: Run) -> None:
        return None


def connections_of_starter(run: Run, apps) -> dict[str, ToolConnection]:
    """The working connections of the person who started ``run`` to ``apps``. One whose access
    token has expired is refreshed now; one the app will not refresh is left out (and revoked),
    so the call waits for its person to connect again rather than fail."""
    starter = starter_of(run)
    if starter is None:
        return {}
    rows = Connection.objects.filter(
        owner_id=starter,
        tenant_id=run.tenant_id,
        app__name__in=list(apps),
        app__enabled=True,
        status=Connection.Status.ACTIVE,
    ).select_related("app", "owner")
    found = {}
    for connection in rows:
        if connection.expires_at is not None and connection.expires_at - REFRESH_LEEWAY <= timezone.now():
            try:
                do_fresh_access_token(connection.pk)
            except ConnectionUnusableError:
                continue
        found[connection.app.name] = ToolConnection(
            app=connection.app.name,
            owner=connection.owner.get_username(),
            open_client=partial(authorised_client, connection),
        )
    return found
