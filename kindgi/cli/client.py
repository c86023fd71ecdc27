"""The command line's ``kindgi.Client``, and each of its failures as one line for stderr."""

from kindgi.client import (
    ApiError,
    AuthenticationError,
    Client,
    ClientError,
    ServerUnreachableError,
)
from kindgi.client.config import resolve
from kindgi.client.transport import package_version


def client_for(url: str | None, token: str | None) -> Client:
    """The server and token from the flags, the environment or what `kindgi dev` saved. The
    server records a change made with it as the command line's (its User-Agent says so). A
    person at a terminal waits for fewer and shorter retries than a service would."""
    settings = resolve(url, token)
    return Client(
        settings.url,
        settings.token,
        retries=2,
        backoff=0.25,
        user_agent=f"kindgi-cli/{package_version()}",
    )


def explain(error: ClientError, *, token_given: bool) -> str:
    if isinstance(error, ServerUnreachableError):
        return (
            f"cannot reach the Kindgi server at {error.url} ({type(error.cause).__name__}); "
            "is it running? Start one with `kindgi dev`, or pass --url"
        )
    if isinstance(error, AuthenticationError) and error.code != "stream_refused":
        hint = (
            error.message
            if token_given
            else "no API token: run `kindgi dev`, or pass --token / set KINDGI_TOKEN"
        )
        return f"the server refused the request (401): {hint}"
    if isinstance(error, ApiError):
        return f"{error.message} ({error.status})"
    return str(error)
