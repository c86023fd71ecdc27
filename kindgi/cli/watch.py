"""`kindgi runs watch ID`: a run's journal, live, over its WebSocket (``Client.runs.watch``,
which opens a dropped socket again where it stopped).

Each entry is printed as one JSON line on stdout; a status line is kept on stderr when it is a
terminal. Stops when the watched run completes, fails, is cancelled or waits (suspended).
"""

import json
import sys

from kindgi.cli.errors import API_ERROR, OK, CliError
from kindgi.client import (
    ApiError,
    AuthenticationError,
    Client,
    NotFoundError,
    PermissionDeniedError,
    StreamClosedError,
)
from kindgi.client.stream import NoNewsError

STOPPING = {"completed": OK, "suspended": OK, "failed": API_ERROR, "cancelled": API_ERROR}


def watch(client: Client, run_id: str, *, timeout: float | None = None) -> int:
    live_line = sys.stderr.isatty()
    status = None
    try:
        for event in client.runs.watch(run_id, until=STOPPING, timeout=timeout):
            print(json.dumps({"runId": event.run_id, **event.entry.to_wire()}), flush=True)
            if event.run_id == run_id:
                status = event.run_status
            if live_line:
                entry = event.entry
                sys.stderr.write(
                    f"\r\033[K{event.run_status}: #{entry.sequence} {entry.kind} {entry.node_id}"
                )
                sys.stderr.flush()
    except NoNewsError as error:
        raise CliError(str(error)) from None
    except AuthenticationError:
        raise CliError(
            "the server refused the stream (4401): no API token it accepts; pass --token or set KINDGI_TOKEN"
        ) from None
    except PermissionDeniedError:
        raise CliError("your user is not a member of a tenant (4403)") from None
    except NotFoundError as error:
        raise CliError(error.message) from None
    except ApiError as error:
        raise CliError(f"the server refused to stream run {run_id} (HTTP {error.status})") from None
    except StreamClosedError as error:
        raise CliError(str(error)) from None
    status = status or client.runs.get(run_id).status
    if live_line:
        sys.stderr.write("\n")
    print(f"run {run_id} is {status}", file=sys.stderr)
    return STOPPING.get(status, OK)
