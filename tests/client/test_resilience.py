"""What the client does when the network fails between it and a live `kindgi dev`: it retries
what cannot happen twice, with the same Idempotency-Key, and a dropped stream resumes where
it stopped, missing nothing and repeating nothing."""

import os
import subprocess
import sys
import threading
import time

import pytest

from kindgi.client import InvalidRequestError, ServerUnreachableError, StreamClosedError

NOTE = {"orderId": "ord_1001", "text": "Customer called"}


def runs_of(direct, flow_id: str) -> list[str]:
    return [run.id for run in direct.runs.list(flow_id=flow_id)]


def test_an_answer_lost_after_the_run_started_is_asked_again_and_starts_no_second_run(
    connect, dev, proxy, direct
):
    """The request reaches the server, which starts the run; its answer never comes back. The
    client sends it again with the same key, and is given the first run."""
    before = runs_of(direct, "my-pack.note-order")
    proxy.lose_answers = 1
    run = connect(proxy.url, dev[1], backoff=0.01).runs.start(flow_id="my-pack.note-order", input=NOTE)
    assert proxy.connections == 2  # the lost answer, and the retry
    after = runs_of(direct, "my-pack.note-order")
    assert after == [run.id, *before]  # one run more, the one the retry was answered with


def test_a_decision_whose_answer_was_lost_is_decided_once(connect, dev, proxy, direct):
    run = direct.runs.start(agent_id="acme-ops.status-agent", input={"userMessage": "Lost answer."})
    (approval,) = direct.approvals.list(run_id=run.id)
    proxy.lose_answers = 1
    completion = connect(proxy.url, dev[1], backoff=0.01).approvals.approve(approval.id, rationale="Once")
    assert (completion.kind, completion.decision.rationale) == ("terminal", "Once")
    finished = direct.runs.get(run.id)
    assert [message.role for message in finished.messages].count("tool") == 1


def test_a_gateways_502_is_retried_a_bad_request_is_not(connect, dev, proxy):
    kindgi = connect(proxy.url, dev[1], backoff=0.01)
    proxy.bad_gateways = 2
    assert kindgi.reviewers.me().user == "admin"
    assert (proxy.connections, proxy.requests) == (3, 1)

    with pytest.raises(InvalidRequestError):
        kindgi.runs.start(flow_id="my-pack.check-order", input={})
    assert proxy.requests == 2


def test_a_lost_answer_to_what_has_no_key_is_not_sent_again(connect, dev, proxy, direct):
    """Cancelling has no Idempotency-Key on the server: sent again it would say 409 of a run it
    cancelled. The client says the server was not reached, and does not send it again."""
    run = direct.runs.start(agent_id="acme-ops.status-agent", input={"userMessage": "Cancel me."})
    proxy.lose_answers = 1
    with pytest.raises(ServerUnreachableError):
        connect(proxy.url, dev[1], backoff=0.01).runs.cancel(run.id)
    assert proxy.connections == 1
    assert direct.runs.get(run.id).status == "cancelled"


def test_a_server_that_refuses_connections_is_tried_again_then_unreachable(connect, dev, proxy):
    proxy.refusing = True
    with pytest.raises(ServerUnreachableError) as unreachable:
        connect(proxy.url, dev[1], retries=2, backoff=0.01).runs.page()
    assert unreachable.value.url == proxy.url
    assert proxy.connections == 3


def test_a_watch_resumes_after_its_socket_dropped_missing_and_repeating_nothing(connect, dev, proxy, direct):
    """A flow whose agent step waits: the stream carries the flow's entries and its step's. The
    socket is cut, the run goes on while the client cannot connect, then it can again."""
    flow = direct.runs.start(flow_id="acme-ops.status-flow", input={"userMessage": "Checkout is back."})
    assert flow.status == "suspended"
    (approval,) = direct.approvals.list(run_id=flow.id, status="pending")
    step = approval.provenance_ref.run_id
    kindgi = connect(proxy.url, dev[1], retries=8, backoff=0.2)

    events = kindgi.runs.watch(flow.id)
    seen = [next(events) for _ in range(3)]
    proxy.refusing = True
    proxy.cut()
    direct.approvals.approve(approval.id, rationale="While the client was away")
    assert direct.runs.get(flow.id).status == "completed"
    # The client's first tries to open it again are refused; a second later, one is let in.
    threading.Timer(1.0, setattr, (proxy, "refusing", False)).start()
    seen += list(events)

    assert proxy.connections > 2  # it was cut, refused, then let in again
    received = [(event.run_id, event.entry.sequence) for event in seen]
    journal = [(flow.id, entry.sequence) for entry in direct.runs.journal(flow.id)]
    journal += [(step, entry.sequence) for entry in direct.runs.journal(step)]
    assert len(received) == len(set(received))
    assert sorted(received) == sorted(journal)
    assert [sequence for run_id, sequence in received if run_id == flow.id] == list(
        range(1, len([entry for entry in journal if entry[0] == flow.id]) + 1)
    )
    assert seen[-1].run_id == flow.id
    assert (seen[-1].entry.kind, seen[-1].run_status) == ("run.completed", "completed")


def test_waiting_ends_at_its_timeout_however_often_the_stream_is_cut(connect, dev, proxy, direct):
    """A proxy that cuts every socket soon after it opens (an idle timeout shorter than the
    wait): the wait still ends when it said it would, and a watch gives up, each reopening
    that brings nothing new counting as a failure."""
    run = direct.runs.start(agent_id="acme-ops.status-agent", input={"userMessage": "Cut often."})
    kindgi = connect(proxy.url, dev[1], retries=50, backoff=0.05)
    proxy.cut_after = 0.3
    began = time.monotonic()
    with pytest.raises(TimeoutError):
        kindgi.runs.wait(run.id, timeout=3)
    assert 2.5 < time.monotonic() - began < 8

    few = connect(proxy.url, dev[1], retries=3, backoff=0.05)
    with pytest.raises(StreamClosedError):
        list(few.runs.watch(run.id))
    direct.runs.cancel(run.id)


def test_a_wait_for_a_suspension_returns_a_run_that_finished_without_one(kindgi):
    run = kindgi.runs.start(flow_id="my-pack.check-order", input={"orderId": "ord_1001"})
    assert kindgi.runs.wait(run.id, until="suspended", timeout=10).status == "completed"
    assert [event.entry.kind for event in kindgi.runs.watch(run.id, until="suspended")][-1] == "run.completed"


WATCH_AT_DEBUG = """
import asyncio, logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout)
from kindgi import AsyncClient, Client

with Client() as kindgi:
    run = kindgi.runs.start(flow_id="my-pack.check-order", input={"orderId": "ord_1001"})
    events = list(kindgi.runs.watch(run.id))
    print(repr(kindgi._transport.settings))

async def watch():
    async with AsyncClient() as kindgi:
        return [event async for event in kindgi.runs.watch(run.id)]

assert len(asyncio.run(watch())) == len(events) > 0
print("WATCHED")
"""


def test_a_watch_logs_no_token_even_at_debug(dev, tmp_path):
    """websockets writes every header it sends at DEBUG, and a service's logging may be there
    (a process of its own: this one's Django logging hides tokens from its own lines)."""
    env = {**os.environ, "KINDGI_URL": dev[0], "KINDGI_TOKEN": dev[1], "KINDGI_CONFIG": str(tmp_path / "x")}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    result = subprocess.run(
        [sys.executable, "-c", WATCH_AT_DEBUG], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert "WATCHED" in result.stdout
    assert "DEBUG:httpcore" in result.stdout  # the service logs at DEBUG
    assert dev[1] not in result.stdout + result.stderr
