"""Who is on the other end of a WebSocket, and whether they still may be.

A socket authenticates as its session's user or with an API token. Access is checked when it
connects and again every ``KINDGI_SOCKET_RECHECK_SECONDS`` while it is open: once the token is
revoked, the user deactivated or signed out, the socket closes with ``4401``; once they are no
longer a member of the tenant whose events it carries, with ``4403``.
"""

import asyncio
import random
from dataclasses import dataclass

from channels.db import database_sync_to_async
from channels.security.websocket import AllowedHostsOriginValidator
from django.contrib.auth import get_user_model
from django.contrib.sessions.models import Session
from django.utils import timezone

from core.conf import setting
from tenants.tokens import bearer_token, user_for_token

UNAUTHENTICATED = 4401
FORBIDDEN = 4403
NOT_FOUND = 4404


def _bearer_token(scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return bearer_token(value.decode("latin-1"))
    return None


def socket_user(scope):
    """The user at connect time. Synchronous (touches the database): call through
    database_sync_to_async."""
    user = scope.get("user")
    if user is not None and user.is_authenticated:
        return user
    token = _bearer_token(scope)
    return user_for_token(token) if token else None


@dataclass(frozen=True)
class Access:
    user: object | None
    tenant_id: object | None

    def refusal(self, tenant_id) -> int | None:
        """The close code for a socket of ``tenant_id`` with this access, or None if it may stay."""
        if self.user is None:
            return UNAUTHENTICATED
        if self.tenant_id is None or self.tenant_id != tenant_id:
            return FORBIDDEN
        return None


def current_access(scope) -> Access:
    """Who the socket's credentials name now, read afresh (synchronous: the database)."""
    token = _bearer_token(scope)
    user = user_for_token(token) if token else _session_user_now(scope)
    membership = getattr(user, "membership", None) if user is not None else None
    return Access(user=user, tenant_id=membership.tenant_id if membership else None)


def _session_user_now(scope):
    user = scope.get("user")
    if user is None or not user.is_authenticated:
        return None
    session = scope.get("session")
    key = getattr(session, "session_key", None)
    if key and not Session.objects.filter(session_key=key, expire_date__gt=timezone.now()).exists():
        return None  # signed out, or the session expired
    return get_user_model().objects.select_related("membership").filter(pk=user.pk, is_active=True).first()


class KeepsCheckingAccess:
    """For a consumer of one tenant's events: checks the socket's access again and again while it
    is open, and closes it as soon as access is gone. Call ``keep_checking(tenant_id)`` once the
    socket is accepted, and ``stop_checking()`` when it disconnects."""

    _access_watch: asyncio.Task | None = None
    access_gone = False

    def keep_checking(self, tenant_id) -> None:
        self._access_watch = asyncio.ensure_future(self._watch_access(tenant_id))

    def stop_checking(self) -> None:
        if self._access_watch is not None:
            self._access_watch.cancel()

    async def _watch_access(self, tenant_id) -> None:
        every = setting("KINDGI_SOCKET_RECHECK_SECONDS")
        # Sockets opened together check at different moments, not all at once.
        await asyncio.sleep(random.uniform(0, every))
        while True:
            access = await database_sync_to_async(current_access)(self.scope)
            code = access.refusal(tenant_id)
            if code is not None:
                self.access_gone = True  # nothing more is sent, even what is already on its way
                await self.close(code=code)
                return
            await asyncio.sleep(every)


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
