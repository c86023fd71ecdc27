"""Who is on the other end of a WebSocket, and whether they still may be.

A socket authenticates as its session's user or with an API token. Access is checked when it
connects, and again every ``KINDGI_SOCKET_RECHECK_SECONDS`` while it is open: once the token is
revoked, the user deactivated or signed out, the socket closes with ``4401``; once they are no
longer a member of the tenant whose events it carries, with ``4403``. One watcher per process
checks every open socket at once, in three queries however many sockets are open.

At connect the same codes say why a socket may not open: it is accepted and closed at once with
``4401`` (no valid credentials), ``4403`` (a user of no tenant) or ``4404`` (a path that names
nothing the caller may see, an other tenant's run included, so the code tells nothing of it),
rather than refused at the handshake, where a client sees only an HTTP 403 that says none of
this. Only a browser from a host not allowed is refused at the handshake (the Origin check).
"""

import asyncio
import logging
from collections.abc import Iterable
from dataclasses import dataclass

from channels.db import database_sync_to_async
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.utils import timezone

from core.conf import setting
from tenants.models import ApiToken
from tenants.tokens import active_token, bearer_token

UNAUTHENTICATED = 4401
FORBIDDEN = 4403
NOT_FOUND = 4404

logger = logging.getLogger("kindgi.sockets")


def _bearer_token(scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return bearer_token(value.decode("latin-1"))
    return None


@dataclass(frozen=True, kw_only=True)
class Identity:
    """Who a socket is, and by which credentials, so that they can be checked again."""

    user: object
    tenant_id: object | None
    token_id: int | None = None
    session_key: str | None = None


def socket_identity(scope) -> Identity | None:
    """Who the socket's session or token names at connect time, or None. Synchronous (touches
    the database): call through database_sync_to_async."""
    user = scope.get("user")
    if user is not None and user.is_authenticated:
        session = scope.get("session")
        return Identity(
            user=user, tenant_id=_tenant_of(user), session_key=getattr(session, "session_key", None)
        )
    token = _bearer_token(scope)
    record = active_token(token) if token else None
    if record is None:
        return None
    return Identity(user=record.user, tenant_id=_tenant_of(record.user), token_id=record.pk)


def refusal_at_connect(identity: Identity | None) -> int | None:
    """The close code for a socket whose caller may see nothing at all, or None."""
    if identity is None:
        return UNAUTHENTICATED
    if identity.tenant_id is None:
        return FORBIDDEN
    return None


async def refuse(consumer, code: int) -> None:
    """Accept, then close with ``code``: a close a client can read, unlike a refused handshake."""
    await consumer.accept()
    await consumer.close(code=code)


def _tenant_of(user):
    membership = getattr(user, "membership", None)
    return membership.tenant_id if membership else None


def refusals(sockets: Iterable[tuple[Identity, object]]) -> list[int | None]:
    """For each (identity, tenant whose events the socket carries): the close code if access is
    gone now, else None. Three queries for them all."""
    sockets = list(sockets)
    token_ids = {identity.token_id for identity, _ in sockets if identity.token_id is not None}
    session_keys = {identity.session_key for identity, _ in sockets if identity.session_key}
    user_ids = {identity.user.pk for identity, _ in sockets}
    valid_tokens = set(
        ApiToken.objects.filter(pk__in=token_ids, revoked_at__isnull=True).values_list("pk", flat=True)
    )
    live_sessions = set(
        Session.objects.filter(session_key__in=session_keys, expire_date__gt=timezone.now()).values_list(
            "session_key", flat=True
        )
    )
    tenant_of = dict(
        get_user_model()
        .objects.filter(pk__in=user_ids, is_active=True)
        .values_list("pk", "membership__tenant_id")
    )
    codes = []
    for identity, tenant_id in sockets:
        signed_out = identity.session_key is not None and identity.session_key not in live_sessions
        revoked = identity.token_id is not None and identity.token_id not in valid_tokens
        if revoked or signed_out or identity.user.pk not in tenant_of:
            codes.append(UNAUTHENTICATED)
        elif tenant_of[identity.user.pk] != tenant_id:
            codes.append(FORBIDDEN)
        else:
            codes.append(None)
    return codes


class _Watcher:
    """This event loop's open sockets, checked together, again and again."""

    def __init__(self) -> None:
        self.sockets: dict = {}  # consumer → (identity, tenant id)
        self.task: asyncio.Task | None = None

    def add(self, consumer, identity: Identity, tenant_id) -> None:
        self.sockets[consumer] = (identity, tenant_id)
        if self.task is None or self.task.done():
            self.task = asyncio.ensure_future(self._watch())

    def remove(self, consumer) -> None:
        self.sockets.pop(consumer, None)

    async def _watch(self) -> None:
        while self.sockets:
            await asyncio.sleep(setting("KINDGI_SOCKET_RECHECK_SECONDS"))
            watched = list(self.sockets.items())
            try:
                codes = await database_sync_to_async(refusals)([entry for _, entry in watched])
            except Exception:  # the database away for a moment: look again next time
                logger.warning("could not check open sockets' access", exc_info=True)
                continue
            for (consumer, _), code in zip(watched, codes, strict=True):
                if code is not None:
                    self.remove(consumer)
                    consumer.access_gone = True  # nothing more is sent, even what is on its way
                    await consumer.close(code=code)


_watchers: dict[asyncio.AbstractEventLoop, _Watcher] = {}


def _watcher() -> _Watcher:
    loop = asyncio.get_running_loop()
    for old in [other for other in _watchers if other.is_closed()]:
        del _watchers[old]
    return _watchers.setdefault(loop, _Watcher())


class KeepsCheckingAccess:
    """For a consumer of one tenant's events: its access is checked again while it is open, and
    it closes as soon as access is gone. Set ``self.identity`` at connect, call
    ``keep_checking(tenant_id)`` once accepted and ``stop_checking()`` on disconnect; send nothing
    once ``access_gone``."""

    identity: Identity | None = None
    access_gone = False

    def keep_checking(self, tenant_id) -> None:
        _watcher().add(self, self.identity, tenant_id)

    def stop_checking(self) -> None:
        _watcher().remove(self)


class OriginValidatorUnlessToken:
    """Browsers must come from an allowed host (the Origin check guards cookie sessions against
    other sites); a client that sends a bearer token and no Origin is not a browser riding on a
    cookie, so it passes, and its token is checked like any other."""

    def __init__(self, application):
        self.application = application
        self.validated = AllowedHostsOriginValidator(application)

    async def __call__(self, scope, receive, send):
        headers = dict(scope.get("headers", []))
        if b"origin" not in headers and _bearer_token(scope):
            return await self.application(scope, receive, send)
        return await self.validated(scope, receive, send)


def wants_html(scope) -> bool:
    """The console's htmx sockets ask for fragments; everyone else gets JSON."""
    return b"format=html" in scope.get("query_string", b"")
