"""A run's journal over its WebSocket (``/ws/runs/<id>/?after=<sequence>``), resumed where it
stopped when the socket drops: the part both clients' ``watch`` share.

The server sends the run's entries after ``after`` and all of its steps' runs' entries (marked
``replayed``), then ``replay.done`` with the run's status, then each new entry once. Opening the
socket again with the last sequence seen of the run misses nothing; the steps' entries it sends
again are the ones already given, and are not given twice.
"""

import json
import time
from collections.abc import Iterable
from urllib.parse import quote, urlparse

from websockets.exceptions import ConnectionClosed, InvalidStatus

from kindgi.client.errors import (
    ApiError,
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    StreamClosedError,
)
from kindgi.client.models import JournalEvent, RunDetail
from kindgi.client.transport import RetryPolicy


class NoNewsError(TimeoutError):
    """Nothing came on a run's stream for as long as the caller would wait."""


# The server accepts a socket it may not serve, then closes it with one of these (docs/api.md).
REFUSED = {4401: AuthenticationError, 4403: PermissionDeniedError, 4404: NotFoundError}


def statuses(until: str | Iterable[str]) -> frozenset[str]:
    return frozenset({until} if isinstance(until, str) else until)


class Resumption:
    """What a watch of ``run_id`` has given so far, and so where to open its socket again."""

    def __init__(self, base_url: str, run_id: str, *, after: int, until: str | Iterable[str]):
        self.base_url, self.run_id = base_url, str(run_id)
        self.last: dict[str, int] = {self.run_id: max(int(after), 0)}
        self.until = statuses(until)
        self.done = False
        self.failures = 0  # drops in a row, with nothing received in between

    def url(self) -> str:
        parsed = urlparse(self.base_url)
        scheme = "wss" if parsed.scheme == "https" else "ws"
        prefix = parsed.path.rstrip("/")
        return (
            f"{scheme}://{parsed.netloc}{prefix}/ws/runs/{quote(self.run_id, safe='')}/"
            f"?after={self.last[self.run_id]}"
        )

    def take(self, message: str | bytes) -> JournalEvent | None:
        """The event in ``message``, unless it was given already or is none (``replay.done``)."""
        self.failures = 0
        event = json.loads(message)
        if event.get("type") == "replay.done":
            self.done = event.get("runStatus") in self.until
            return None
        if event.get("type") != "journal.entry":
            return None
        run_id, sequence = event["runId"], event["entry"]["sequence"]
        if sequence <= self.last.get(run_id, 0):
            return None
        self.last[run_id] = sequence
        if run_id == self.run_id and not event.get("replayed") and event["runStatus"] in self.until:
            self.done = True
        return JournalEvent.model_validate(event)

    def after_drop(self, error: BaseException, retry: RetryPolicy) -> float:
        """The pause before opening the socket again, now that ``error`` ended it; or, when it
        is no drop (a refusal, no news for too long) or one too many, the error raised."""
        if isinstance(error, ConnectionClosed) and (refusal := self.refusal(error.rcvd and error.rcvd.code)):
            raise refusal from None
        if isinstance(error, InvalidStatus):
            raise self.refused_at_handshake(error.response.status_code) from None
        if isinstance(error, NoNewsError):
            raise error
        if self.failures >= retry.retries:
            raise self.gave_up(error) from error
        self.failures += 1
        return retry.pause(self.failures - 1)

    def refusal(self, close_code: int | None) -> ApiError | None:
        """The error a close with ``close_code`` stands for, if it is a refusal (not a drop)."""
        if close_code not in REFUSED:
            return None
        status = close_code - 4000
        messages = {
            401: "the server refused the stream: no API token it accepts",
            403: "your user is not a member of a tenant",
            404: f"run {self.run_id} does not exist, or you may not see it",
        }
        return REFUSED[close_code](status, "stream_refused", messages[status])

    def refused_at_handshake(self, http_status: int) -> ApiError:
        if http_status == 403:  # a browser's Origin, or a server from before close code 4404
            return NotFoundError(
                404, "stream_refused", f"run {self.run_id} does not exist, or you may not see it"
            )
        return ApiError(http_status, "stream_refused", f"the server refused to stream run {self.run_id}")

    def gave_up(self, error: BaseException) -> StreamClosedError:
        return StreamClosedError(
            f"cannot stream run {self.run_id} from {self.base_url} ({type(error).__name__}: {error})"
        )


class Deadline:
    """``timeout`` seconds from now (None: never)."""

    def __init__(self, timeout: float | None):
        self.timeout = timeout
        self.at = None if timeout is None else time.monotonic() + timeout

    def left(self) -> float | None:
        return None if self.at is None else max(self.at - time.monotonic(), 0.0)

    def passed(self) -> bool:
        return self.at is not None and time.monotonic() >= self.at

    def check(self, run: RunDetail) -> None:
        if self.passed():
            raise TimeoutError(f"run {run.id} is still {run.status} after {self.timeout} seconds")
