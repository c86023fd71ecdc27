"""What connections are to runs: the waitpoint of a run that waits for a person to connect an
app, and the connection a call acts through."""

from collections.abc import Mapping
from functools import partial

from django.db.models import Q
from django.utils import timezone

from connections.actions import REFRESH_LEEWAY, do_fresh_access_token
from connections.clients import authorised_client
from connections.exceptions import ConnectionUnusableError
from connections.models import Connection
from connections.selectors import apps_for_tenant
from kindgi import ToolConnection
from runs.models import Run


class ConnectionWaitpoints:
    """A run waiting for a person to connect an app records nothing more than its waitpoint: the
    person sees it on their connections page, and connecting resumes it."""

    def on_suspend(self, run: Run, waitpoint: dict, *, first: bool = False) -> dict:
        return waitpoint

    def on_cancel(self, run: Run) -> None:
        return None

    def may_resolve_any(self, run_ids: list, user) -> bool:
        return False  # connecting an app is its owner's, who is the run's principal or named by it


class ConnectionsOfOwners:
    """The connections a run's calls act through, for ``runs.connection_sources``."""

    def connections(self, run: Run, owners: Mapping[str, str]) -> dict[str, ToolConnection]:
        """The working connection of each app's owner in ``owners`` (app -> user id) to it. One
        whose access token has expired is refreshed now; one the app will not refresh is left
        out (and revoked), so the call waits for its owner to connect again rather than fail."""
        if not owners:
            return {}
        whose = Q()
        for app, owner_id in owners.items():
            whose |= Q(app__name=app, owner_id=owner_id)
        rows = Connection.objects.filter(
            whose, tenant_id=run.tenant_id, app__enabled=True, status=Connection.Status.ACTIVE
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
                connection_id=str(connection.pk),
                open_client=partial(authorised_client, connection, for_run=run.pk),
            )
        return found

    def app_names(self, tenant_id) -> list[str]:
        return list(apps_for_tenant(tenant_id).values_list("name", flat=True))
