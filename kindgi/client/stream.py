"""A run's journal over its WebSocket (``/ws/runs/<id>/?after=<sequence>``), resumed where it
stopped when the socket drops: the part both clients' ``watch`` share.

The server sends the run's entries after ``after`` and all of its steps' runs' entries (marked
``replayed``), then ``replay.done`` with the run's status, then each new entry once. Opening the
socket again with the last sequence seen of the run misses nothing; the steps' entries it sends
again are the ones already given, and are not given twice.
"""

import json
import logging
import time
from collections.abc import Iterable
from urllib.parse import urlparse

from websockets.exceptions import ConnectionClosed, InvalidStatus

from kindgi.client.errors import (
    ApiError,
    AuthenticationError,
    NotFoundError,
    PermissionDeniedError,
    StreamClosedError,
)
from kindgi.client.models import FINISHED, JournalEvent, RunDetail
from kindgi.client.operations import segment
from kindgi.client.transport import RetryPolicy


class _NeverDebug(logging.LoggerAdapter):
    """A logger that is never at DEBUG: there websockets writes each header it sends, the
    token's too."""

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 (logging's name)
        return level > logging.DEBUG and self.logger.isEnabledFor(level)


QUIET = _NeverDebug(logging.getLogger("kindgi.client.websocket"), {})


class NoNewsError(TimeoutError):
    """Nothing came on a run's stream for as long as the caller would wait."""


# The server accepts a socket it may not serve, then closes it with one of these (docs/api.md).
REFUSED = {4401: AuthenticationError, 4403: PermissionDeniedError, 4404: NotFoundError}


# The entry that puts a run in each status it stops in: the live event that carries it ends a
# watch waiting for that status (an entry sent late, or read to fill a gap, carries the status
# the run has by then, not the one it had then).
ENTERED_BY = {
    "run.completed": "completed",
    "run.failed": "failed",
    "run.cancelled": "cancelled",
    "wait.suspended": "suspended",
}


def statuses(until: str | Iterable[str]) -> frozenset[str]:
    return frozenset({until} if isinstance(until, str) else until)


class Resumption:
    """What a watch of ``run_id`` has given so far, and so where to open its socket again."""

    def __init__(
        self,
        base_url: str,
        run_id: str,
        *,
        after: int,
        until: str | Iterable[str],
        timeout: float | None,
        deadline: "Deadline | None" = None,
    ):
        self.base_url, self.run_id = base_url, str(run_id)
        self.last: dict[str, int] = {self.run_id: max(int(after), 0)}
        # A finished run has nothing more to say, whatever the watch waits for.
        self.until = statuses(until) | FINISHED
        self.timeout, self.deadline = timeout, deadline or Deadline(None)
        self.done = False
        self.failures = 0  # drops in a row, with no entry received in between

    def receive_timeout(self) -> float | None:
        """How long to wait for the next message: ``timeout`` of silence, within the deadline."""
        left = self.deadline.left()
        if left is None or self.timeout is None:
            return self.timeout if left is None else left
        return min(self.timeout, left)

    def silence(self) -> TimeoutError:
        """What waiting ``receive_timeout`` seconds in vain means."""
        if self.deadline.passed():
            return NoNewsError(
                f"run {self.run_id} is not yet as waited for after {self.deadline.timeout} seconds"
            )
        return NoNewsError(f"no news of run {self.run_id} for {self.timeout} seconds")

    def url(self) -> str:
        parsed = urlparse(self.base_url)
        scheme = "wss" if parsed.scheme == "https" else "ws"
        prefix = parsed.path.rstrip("/")
        return (
            f"{scheme}://{parsed.netloc}{prefix}/ws/runs/{segment(self.run_id)}/"
            f"?after={self.last[self.run_id]}"
        )

    def take(self, message: str | bytes) -> JournalEvent | None:
        """The event in ``message``, unless it was given already or is none (``replay.done``)."""
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
        self.failures = 0
        status, kind = event["runStatus"], event["entry"]["kind"]
        if run_id == self.run_id and not event.get("replayed") and status in self.until:
            # A status an entry puts the run in ends the watch with that entry, not an older one.
            self.done = status not in ENTERED_BY.values() or ENTERED_BY.get(kind) == status
        return JournalEvent.model_validate(event)

    def after_drop(self, error: BaseException, retry: RetryPolicy) -> float:
        """The pause before opening the socket again, now that ``error`` ended it; or, when it
        is no drop (a refusal, no news for too long) or one too many, the error raised."""
        close_code = error.rcvd.code if isinstance(error, ConnectionClosed) and error.rcvd else None
        if refusal := self.refusal(close_code):
            raise refusal from None
        if isinstance(error, InvalidStatus):
            raise self.refused_at_handshake(error.response.status_code) from None
        if isinstance(error, NoNewsError):
            raise error
        if self.deadline.passed():
            raise self.silence() from error
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
