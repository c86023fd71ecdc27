"""`kindgi runs watch ID`: a run's journal, live, over its WebSocket.

Each entry is printed as one JSON line on stdout; a status line is kept on stderr when it is a
terminal. Stops when the watched run completes, fails, is cancelled or waits (suspended).
"""

import json
import sys
from urllib.parse import urlparse

from websockets.exceptions import ConnectionClosed, InvalidStatus, WebSocketException
from websockets.sync.client import connect

from kindgi.cli.config import Settings
from kindgi.cli.errors import API_ERROR, OK, CliError

STOPPING = {"completed": OK, "suspended": OK, "failed": API_ERROR, "cancelled": API_ERROR}

# The server accepts a socket it may not serve, then closes it with one of these (docs/api.md).
CLOSED_BECAUSE = {
    4401: "the server refused the stream (4401): no API token it accepts; pass --token or set KINDGI_TOKEN",
    4403: "your user is not a member of a tenant (4403)",
    4404: "run {run_id} does not exist, or you may not see it",
}


def _socket_url(settings: Settings, run_id: str) -> str:
    parsed = urlparse(settings.url)
    scheme = "wss" if parsed.scheme == "https" else "ws"
    return f"{scheme}://{parsed.netloc}/ws/runs/{run_id}/?after=0"


def watch(settings: Settings, run_id: str, *, timeout: float | None = None) -> int:
    headers = {"Authorization": f"Bearer {settings.token}"} if settings.token else {}
    live_line = sys.stderr.isatty()
    try:
        with connect(
            _socket_url(settings, run_id), additional_headers=headers, origin=settings.url, open_timeout=10
        ) as socket:
            while True:
                try:
                    event = json.loads(socket.recv(timeout=timeout))
                except TimeoutError:
                    raise CliError(f"no news of run {run_id} for {timeout} seconds") from None
                if event["type"] == "replay.done":
                    if event["runStatus"] in STOPPING:
                        return _stop(run_id, event["runStatus"], live_line)
                    continue
                print(json.dumps({"runId": event["runId"], **event["entry"]}), flush=True)
                if live_line:
                    entry = event["entry"]
                    status = f"{event['runStatus']}: #{entry['sequence']} {entry['kind']} {entry['nodeId']}"
                    sys.stderr.write(f"\r\033[K{status}")
                    sys.stderr.flush()
                if not event.get("replayed") and event["runId"] == run_id and event["runStatus"] in STOPPING:
                    return _stop(run_id, event["runStatus"], live_line)
    except ConnectionClosed as error:
        code = error.rcvd.code if error.rcvd else None
        if code in CLOSED_BECAUSE:
            raise CliError(CLOSED_BECAUSE[code].format(run_id=run_id)) from None
        raise CliError(f"the server closed the stream of run {run_id} ({error})") from None
    except InvalidStatus as error:
        if error.response.status_code == 403:  # the handshake refused: a server before 4404
            raise CliError(f"run {run_id} does not exist, or you may not see it") from None
        raise CliError(
            f"the server refused to stream run {run_id} (HTTP {error.response.status_code})"
        ) from None
    except (OSError, WebSocketException) as error:
        raise CliError(
            f"cannot stream run {run_id} from {settings.url} ({type(error).__name__}: {error})"
        ) from None


def _stop(run_id: str, status: str, live_line: bool) -> int:
    if live_line:
        sys.stderr.write("\n")
    print(f"run {run_id} is {status}", file=sys.stderr)
    return STOPPING[status]
