"""Who is on the other end of a WebSocket: the session's user, or an API token's."""

from tenants.tokens import bearer_token, user_for_token


def _bearer_token(scope) -> str | None:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            return bearer_token(value.decode("latin-1"))
    return None


def socket_user(scope):
    """Synchronous (touches the database): call through database_sync_to_async."""
    user = scope.get("user")
    if user is not None and user.is_authenticated:
        return user
    token = _bearer_token(scope)
    return user_for_token(token) if token else None


def wants_html(scope) -> bool:
    """The console's htmx sockets ask for fragments; everyone else gets JSON."""
    return b"format=html" in scope.get("query_string", b"")
