"""What the client raises: the API's error body as an exception, or a server it cannot reach."""

from typing import Any

from kindgi.errors import KindgiError


class ClientError(KindgiError):
    """Base class of the client's errors."""


class ApiError(ClientError):
    """The server answered with an error: ``{"error": {"code", "message", "details"}}``.

    ``status`` is the HTTP status; ``code`` the error's code (``invalid_input``, ``not_found``,
    ``conflict``…); ``details`` what the body gives more (``errors``: one line per bad field)."""

    def __init__(self, status: int, code: str, message: str, details: dict[str, Any] | None = None):
        super().__init__(f"{message} ({status})")
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}

    @property
    def errors(self) -> list[str]:
        """One ``/<json-pointer>: <message>`` line per bad field, where the server named them."""
        return list(self.details.get("errors") or [])


class InvalidRequestError(ApiError):
    """400: a field is missing, unknown or wrong (``errors`` names each)."""


class AuthenticationError(ApiError):
    """401: no token, or one the server does not accept."""


class PermissionDeniedError(ApiError):
    """403: not allowed (not a reviewer, a role too low, not a tenant admin…)."""


class NotFoundError(ApiError):
    """404: nothing by that id in your tenant."""


class ConflictError(ApiError):
    """409: not in a state that allows this (already decided…), or an Idempotency-Key already
    used with another request."""


class RateLimitedError(ApiError):
    """429: too many requests; ``retry_after`` seconds, when the server said."""

    retry_after: float | None = None


BY_STATUS: dict[int, type[ApiError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitedError,
}


def api_error(status: int, body: Any, text: str, reason: str, *, retry_after: str | None = None) -> ApiError:
    """The exception for an error answer: its JSON body when it has the API's shape, else a
    line of what it said (a proxy's page, say)."""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        code, message = str(error.get("code") or "error"), error["message"]
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
    else:
        code, message, details = "error", (text.strip()[:200] or reason), {}
    error = BY_STATUS.get(status, ApiError)(status, code, message, details)
    if isinstance(error, RateLimitedError) and retry_after and retry_after.strip().isdigit():
        error.retry_after = float(retry_after)
    return error


class InvalidIdError(ClientError, ValueError):
    """An id that is none of the API's, refused before anything is sent."""


class ServerUnreachableError(ClientError):
    """No answer from the server (it is down, or the network failed), after the retries."""

    def __init__(self, url: str, cause: BaseException):
        super().__init__(f"cannot reach the Kindgi server at {url} ({type(cause).__name__})")
        self.url = url
        self.cause = cause


class StreamClosedError(ClientError):
    """A run's stream was refused or closed, and ``watch`` will not open it again."""
