"""When ``kindgi.Client`` sends a request again: only where doing so cannot do anything twice."""

import httpx
import pytest

from kindgi.client import operations
from kindgi.client.transport import RetryPolicy

POLICY = RetryPolicy(retries=3)
REQUEST = httpx.Request("POST", "http://kindgi.test/api/v1/runs")
START = operations.start_run(flow_id="my-pack.check-order", input={})  # honours Idempotency-Key
CANCEL = operations.cancel_run("0c01376f-1566-4a0d-ba6f-95f4efff4758")  # does not
READ = operations.get_run("0c01376f-1566-4a0d-ba6f-95f4efff4758")
PATCH = operations.update_schedule("0c01376f-1566-4a0d-ba6f-95f4efff4758", {"enabled": False})


def error(kind: type[httpx.TransportError]) -> httpx.TransportError:
    return kind("failed", request=REQUEST)


def answered(status: int, code: str | None = None) -> httpx.Response:
    body = {"error": {"code": code, "message": "…", "details": {}}} if code else {}
    return httpx.Response(status, json=body, request=REQUEST)


@pytest.mark.parametrize(
    ("operation", "outcome", "again"),
    [
        # Nothing reached the server: anything may be sent again.
        (CANCEL, error(httpx.ConnectError), True),
        (PATCH, error(httpx.ConnectTimeout), True),
        # It may have reached it: only what cannot happen twice.
        (READ, error(httpx.ReadError), True),
        (START, error(httpx.RemoteProtocolError), True),
        (START, error(httpx.ReadTimeout), True),
        (CANCEL, error(httpx.ReadError), False),
        (PATCH, error(httpx.RemoteProtocolError), False),
        (START, answered(502), True),
        (READ, answered(503), True),
        (START, answered(504), True),
        (CANCEL, answered(504), False),
        # The first attempt with the key is still at work: ask again for its answer.
        (START, answered(409, "idempotency_key_in_use"), True),
        # Any other answer is the answer.
        (START, answered(409, "conflict"), False),
        (START, answered(400, "invalid_input"), False),
        (READ, answered(500, "internal_error"), False),
        (READ, answered(429, "rate_limited"), False),
        (START, answered(201), False),
    ],
)
def test_what_is_sent_again(operation, outcome, again):
    assert (POLICY.pause_before_retry(operation, 0, outcome) is not None) == again


def test_no_more_than_the_retries_and_pauses_that_grow_to_a_ceiling():
    outcome = error(httpx.ConnectError)
    assert POLICY.pause_before_retry(READ, 2, outcome) is not None
    assert POLICY.pause_before_retry(READ, 3, outcome) is None
    pauses = [RetryPolicy(backoff=0.5, most=8).pause(attempt) for attempt in range(8)]
    assert 0.25 <= pauses[0] <= 0.5
    assert 4 <= pauses[4] <= 8
    assert max(pauses) <= 8
