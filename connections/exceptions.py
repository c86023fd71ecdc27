from core.errors import DomainError


class ConnectionError_(DomainError):  # noqa: N801  (Python's ConnectionError is another thing)
    """Base class of the connections' errors."""


class ConnectionNotFoundError(ConnectionError_):
    """No such connection, app or authorization for the caller: another's do not exist for them."""

    http_status = 404
    code = "not_found"


class ConnectionRefusedByAppError(ConnectionError_):
    """The app did not grant the connection: its own words say why."""

    http_status = 409
    code = "connection_refused"


class ConnectionUnusableError(ConnectionError_):
    """The connection cannot be used now: revoked, or the app would not refresh it."""

    http_status = 409
    code = "connection_unusable"


class ConnectionForbiddenError(ConnectionError_):
    """The caller may not have a connection (a service account)."""

    http_status = 403
    code = "forbidden"
