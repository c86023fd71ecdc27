"""The one way connections are written: started, granted, refreshed, revoked.

A connection is granted only to the person who started it: the app's answer (its state) is
matched to a pending connection of the signed-in caller, so a link someone else started can
never attach their tokens to your account or yours to theirs.
"""

import hashlib
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from audit.actions import SettingKind, do_save_setting
from connections import oauth
from connections.crypto import reseal, seal, unseal
from connections.exceptions import (
    ConnectionForbiddenError,
    ConnectionNotFoundError,
    ConnectionRefusedByAppError,
    ConnectionUnusableError,
)
from connections.models import App, Connection, ConnectionUse
from connections.selectors import app_for_tenant, connection_of, runs_waiting_for
from core.conf import setting
from runs.actions import resume_locked_run
from runs.engine.waitpoints import CONNECTION
from runs.models import Run, RunStatus
from tenants.authority import check_may_configure
from tenants.exceptions import ConfigurationForbiddenError
from tenants.selectors import is_service_account


def _digest(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def check_start_connection(*, user, tenant, app_name: str, redirect_uri: str) -> tuple[Connection, str]:
    """A pending connection of ``user`` to the app, and the URL to send them to. A connection is a
    person's: a service account has none (whose yes would a call through it wait for?)."""
    if is_service_account(user):
        raise ConnectionForbiddenError(
            f"{user.get_username()} is a service account; a connection to an app is a person's"
        )
    app = app_for_tenant(tenant.pk, app_name)
    try:
        url, state, verifier = oauth.authorization_url(app, redirect_uri=redirect_uri)
    except oauth.OAuthFailure as failure:
        raise ConnectionRefusedByAppError(str(failure)) from None
    connection = Connection.objects.create(
        app=app,
        owner=user,
        tenant=tenant,
        state_digest=_digest(state),
        code_verifier=seal(verifier),
        redirect_uri=redirect_uri,
    )
    return connection, url


def check_finish_connection(*, user, state: str, code: str = "", error: str = "") -> Connection:
    """The app's answer to ``user``'s authorization: grant the connection, or record why not."""
    pending = (
        Connection.objects.select_related("app")
        .filter(owner=user, status=Connection.Status.PENDING, state_digest=_digest(state))
        .first()
        if state
        else None
    )
    if pending is None:
        raise ConnectionNotFoundError("this answer matches no connection you started (start again)")
    if error or not code:
        _end_pending(pending, failure=error or "the app sent no code")
        raise ConnectionRefusedByAppError(f"the app did not grant it: {error or 'no code'}")
    try:
        grant = oauth.exchange_code(
            pending.app, code=code, verifier=unseal(pending.code_verifier), redirect_uri=pending.redirect_uri
        )
    except oauth.OAuthFailure as failure:
        _end_pending(pending, failure=str(failure))
        raise ConnectionRefusedByAppError(f"the app did not grant it: {failure}") from None
    with transaction.atomic():
        now = timezone.now()
        for older in Connection.objects.select_for_update().filter(
            app=pending.app, owner=user, status=Connection.Status.ACTIVE
        ):
            _revoke(older, now=now, why="replaced by a new connection")
        pending.status = Connection.Status.ACTIVE
        pending.access_token = seal(grant.access_token)
        pending.refresh_token = seal(grant.refresh_token)
        pending.expires_at = grant.expires_at
        pending.scopes = grant.scopes
        pending.connected_at = now
        pending.state_digest = pending.code_verifier = ""
        pending.failure = ""
        pending.save()
    resume_runs_waiting_for(pending)
    return pending


def _end_pending(pending: Connection, *, failure: str) -> None:
    Connection.objects.filter(pk=pending.pk).update(
        status=Connection.Status.REVOKED,
        state_digest="",
        code_verifier="",
        failure=failure,
        revoked_at=timezone.now(),
    )


def _revoke(connection: Connection, *, now, why: str) -> None:
    connection.status = Connection.Status.REVOKED
    connection.access_token = connection.refresh_token = connection.code_verifier = ""
    connection.state_digest = ""
    connection.revoked_at = now
    connection.failure = why
    connection.save()


@transaction.atomic
def do_remove_connection(*, user, connection_id) -> Connection:
    """Disconnect: the tokens are forgotten at once; the record stays, for the runs that used it."""
    connection = connection_of(user, connection_id)
    connection = Connection.objects.select_for_update().get(pk=connection.pk)
    if connection.status != Connection.Status.REVOKED:
        _revoke(connection, now=timezone.now(), why="disconnected by its owner")
    return connection


# An access token this close to its expiry is refreshed first.
REFRESH_LEEWAY = timedelta(seconds=60)


def do_fresh_access_token(connection_id, *, for_run=None) -> str:
    """The connection's access token, refreshed first if it has expired (or is about to), the
    refreshed one written back. Under the row's lock: two calls never spend one refresh token.
    ``for_run``: the id of the run that is about to use it, noted among the connection's uses."""
    with transaction.atomic():
        connection = Connection.objects.select_for_update().select_related("app").get(pk=connection_id)
        if connection.status != Connection.Status.ACTIVE:
            raise ConnectionUnusableError(f"the connection to {connection.app.label} is {connection.status}")
        now = timezone.now()
        if for_run is not None:
            _note_use(connection, run_id=for_run, now=now)
        if connection.expires_at is None or connection.expires_at - REFRESH_LEEWAY > now:
            Connection.objects.filter(pk=connection.pk).update(last_used_at=now)
            return unseal(connection.access_token)
        if not connection.refresh_token:
            failure = "its access token expired and the app gave no refresh token"
        else:
            try:
                grant = oauth.refreshed(connection.app, unseal(connection.refresh_token))
            except oauth.OAuthFailure as error:
                failure = str(error)
            else:
                Connection.objects.filter(pk=connection.pk).update(
                    access_token=seal(grant.access_token),
                    refresh_token=seal(grant.refresh_token),
                    expires_at=grant.expires_at,
                    scopes=grant.scopes,
                    refreshed_at=now,
                    last_used_at=now,
                )
                return grant.access_token
        _revoke(connection, now=now, why=f"the app refused to refresh it: {failure}")
    raise ConnectionUnusableError(f"the connection to {connection.app.label} stopped working: {failure}")


def _note_use(connection: Connection, *, run_id, now) -> None:
    noted = ConnectionUse.objects.filter(connection=connection, run_id=run_id).update(last_used_at=now)
    if not noted:
        ConnectionUse.objects.create(
            connection=connection, run_id=run_id, first_used_at=now, last_used_at=now
        )


SETTING_FIELDS = {
    "name": "name",
    "displayName": "display_name",
    "authorizeUrl": "authorize_url",
    "tokenUrl": "token_url",
    "scopes": "scopes",
    "clientId": "client_id",
    "clientSecretEnv": "client_secret_env",
    "apiBaseUrl": "api_base_url",
}
REQUIRED_SETTING_FIELDS = ("name", "authorizeUrl", "tokenUrl", "clientId", "apiBaseUrl")


def app_fields_from_setting(config) -> dict:
    """One entry of ``KINDGI_CONNECTION_APPS`` as an App's fields; raises ``ValueError`` naming
    what is wrong."""
    if not isinstance(config, dict):
        raise ValueError(f"each app must be an object, not {config!r}")
    label = f"app {config.get('name')!r}"
    unknown = sorted(set(config) - set(SETTING_FIELDS))
    if unknown:
        raise ValueError(
            f"{label}: unknown field(s) {', '.join(unknown)} (the fields: {', '.join(SETTING_FIELDS)})"
        )
    missing = [name for name in REQUIRED_SETTING_FIELDS if not config.get(name)]
    if missing:
        raise ValueError(f"{label}: missing {', '.join(missing)}")
    fields = {SETTING_FIELDS[key]: value for key, value in config.items()}
    fields.setdefault("scopes", [])
    return fields


@transaction.atomic
def do_sync_settings_apps() -> int:
    """The apps ``KINDGI_CONNECTION_APPS`` lists, as rows: made, changed, or turned off when the
    setting no longer lists them. Returns how many it lists."""
    listed = [app_fields_from_setting(config) for config in setting("KINDGI_CONNECTION_APPS")]
    names = [fields["name"] for fields in listed]
    for fields in listed:
        app = App.objects.filter(name=fields["name"]).first() or App(name=fields["name"])
        if app.pk and app.source != App.Source.SETTINGS:
            raise ValueError(f"KINDGI_CONNECTION_APPS names {app.name!r}, which is a tenant's app already")
        for name, value in fields.items():
            setattr(app, name, value)
        app.source, app.tenant, app.enabled = App.Source.SETTINGS, None, True
        try:
            app.full_clean()
        except ValidationError as error:
            raise ValueError(f"app {app.name!r}: {'; '.join(error.messages)}") from None
        app.save()
    App.objects.filter(source=App.Source.SETTINGS).exclude(name__in=names).update(enabled=False)
    return len(listed)


def do_reseal_connections(batch: int = 500) -> int:
    """Every connection's sealed secrets, sealed again with the newest key, a batch per transaction."""
    count, last = 0, None
    while True:
        with transaction.atomic():
            rows = Connection.objects.select_for_update().order_by("pk")
            rows = list((rows.filter(pk__gt=last) if last else rows)[:batch])
            for connection in rows:
                for name in ("access_token", "refresh_token", "code_verifier"):
                    setattr(connection, name, reseal(getattr(connection, name)))
                connection.save(update_fields=["access_token", "refresh_token", "code_verifier"])
        if not rows:
            return count
        count += len(rows)
        last = rows[-1].pk


def resume_runs_waiting_for(connection: Connection) -> int:
    """Resume each run that waits for ``connection``'s owner to connect its app; how many."""
    key = {"kind": CONNECTION, "app": connection.app.name, "ownerId": str(connection.owner_id)}
    resumed = 0
    for run_id in runs_waiting_for(connection.owner, app_name=connection.app.name).values_list(
        "pk", flat=True
    ):
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=run_id)
            if run.status != RunStatus.SUSPENDED or any(run.waitpoint.get(k) != v for k, v in key.items()):
                continue  # resumed meanwhile by another answer
            resume_locked_run(run, waitpoint_key=key, resolution={"connectionId": str(connection.pk)})
            resumed += 1
    return resumed


APPS = "{tenant}'s apps"
APP_FIELDS = (
    "name",
    "display_name",
    "authorize_url",
    "token_url",
    "scopes",
    "client_id",
    "client_secret_env",
    "api_base_url",
    "enabled",
)


def app_snapshot(app: App) -> dict:
    """What the audit keeps of an app: its fields (the client secret's variable's name, never a secret)."""
    return {name: getattr(app, name) for name in APP_FIELDS}


APP = SettingKind(noun="app", snapshot=app_snapshot, label=lambda app: app.name)


def check_save_app(app: App, *, acting_user, surface: str) -> App:
    """Save a tenant's app (valid, as its form checked it), by whoever may change the tenant's
    configuration. The site's apps come from KINDGI_CONNECTION_APPS, not from here."""
    if app.tenant_id is None:
        raise ConfigurationForbiddenError(
            "an app of no tenant is the site's: KINDGI_CONNECTION_APPS lists it"
        )
    tenant = app.tenant
    check_may_configure(acting_user, tenant, what=APPS.format(tenant=tenant.slug), surface=surface)
    return do_save_setting(app, kind=APP, tenant=tenant, acting_user=acting_user, surface=surface)
