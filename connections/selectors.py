"""Reads of apps and connections: a person sees their own connections, never anyone else's."""

from django.db.models import Q, QuerySet

from connections.exceptions import ConnectionNotFoundError
from connections.models import App, Connection, ConnectionUse
from runs.engine.waitpoints import APPROVAL, CONNECTION, CONNECTION_USE
from runs.models import Run, RunStatus


def apps_for_tenant(tenant_id) -> QuerySet[App]:
    """The apps a tenant's people may connect: the site's, and the tenant's own."""
    return App.objects.filter(Q(tenant__isnull=True) | Q(tenant_id=tenant_id), enabled=True)


def app_for_tenant(tenant_id, name: str) -> App:
    app = apps_for_tenant(tenant_id).filter(name=name).first()
    if app is None:
        raise ConnectionNotFoundError(f"there is no app {name!r} to connect")
    return app


def connections_of(user) -> QuerySet[Connection]:
    return Connection.objects.filter(owner=user).select_related("app").order_by("-created_at")


def connection_of(user, connection_id) -> Connection:
    connection = connections_of(user).filter(pk=connection_id).first()
    if connection is None:
        raise ConnectionNotFoundError(f"you have no connection {connection_id}")
    return connection


def runs_waiting_for(owner, *, app_name: str | None = None):
    waiting = Run.objects.filter(
        status=RunStatus.SUSPENDED, waitpoint__kind=CONNECTION, waitpoint__ownerId=str(owner.pk)
    )
    return waiting.filter(waitpoint__app=app_name) if app_name else waiting


def runs_asking_for_yes(owner):
    """Runs no person started that wait for ``owner``'s yes to use one of their connections."""
    return Run.objects.filter(
        status=RunStatus.SUSPENDED,
        waitpoint__kind=APPROVAL,
        waitpoint__subjectKind=CONNECTION_USE,
        waitpoint__ownerId=str(owner.pk),
    )


def recent_uses(connections, *, limit: int = 200) -> dict:
    """The runs that used each of ``connections`` lately, newest first: connection id -> uses."""
    uses: dict = {}
    rows = ConnectionUse.objects.filter(connection__in=connections).select_related("run")
    for use in rows.order_by("-last_used_at")[:limit]:
        uses.setdefault(use.connection_id, []).append(use)
    return uses
