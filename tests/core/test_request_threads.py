"""The web process serves each request in one thread, reused by the next request with its
database connection (core.asgi.RequestThreads), where Django's handler started a thread, and
so opened a connection, for every request."""

import asyncio
import threading
import time

import pytest
from channels.testing import HttpCommunicator
from django.core.signals import request_finished, request_started
from django.db import connections

from core.asgi import LimitedASGIHandler

pytestmark = pytest.mark.django_db(transaction=True)


class Seen:
    """Where each request's synchronous parts ran, and the connection its view used; with
    ``hold_next``, the next request to start waits in its thread until ``release``."""

    def __init__(self):
        self.started: list[int] = []
        self.finished: list[tuple[int, object, object]] = []
        self.hold_next = False
        self.holding = threading.Event()
        self.released = threading.Event()

    def on_started(self, **kwargs):
        self.started.append(threading.get_ident())
        if self.hold_next:
            self.hold_next = False
            self.holding.set()
            self.released.wait(10)

    def on_finished(self, **kwargs):
        wrapper = connections["default"]  # this thread's, where ``connection`` follows the caller
        wrapper.ensure_connection()
        self.finished.append((threading.get_ident(), wrapper, wrapper.connection))

    def release(self):
        self.released.set()


@pytest.fixture
def seen():
    seen = Seen()
    request_started.connect(seen.on_started)
    request_finished.connect(seen.on_finished)
    yield seen
    request_started.disconnect(seen.on_started)
    request_finished.disconnect(seen.on_finished)


@pytest.fixture
def handler():
    handler = LimitedASGIHandler()
    yield handler
    # What the process would close as it exits: the kept threads' connections.
    for thread in handler.threads.idle:
        thread.submit(connections.close_all).result(timeout=10)
        thread.shutdown()


async def get(handler, path: str = "/healthz") -> int:
    communicator = HttpCommunicator(handler, "GET", path, headers=[(b"host", b"127.0.0.1")])
    response = await communicator.get_response(timeout=10)
    await communicator.wait(timeout=10)  # the response closed, and so request_finished sent
    return response["status"]


def test_requests_one_after_another_share_a_thread_and_its_connection(seen, handler):

    async def three():
        return [await get(handler) for _ in range(3)]

    assert asyncio.run(three()) == [200, 200, 200]
    threads = {thread for thread, _, _ in seen.finished}
    assert len(threads) == 1
    assert threads != {threading.get_ident()}  # not the event loop's
    # The request began, was served and was closed in the one thread.
    assert set(seen.started) == threads
    if connections["default"].settings_dict["CONN_MAX_AGE"]:
        # Kept by the thread between requests (SQLite); a pool's (PostgreSQL) are lent per request.
        assert len({id(raw) for _, _, raw in seen.finished}) == 1


def test_a_request_does_not_wait_for_one_still_running(seen, handler):

    async def one_held_and_one_served():
        seen.hold_next = True
        held = asyncio.create_task(get(handler))
        await asyncio.to_thread(seen.holding.wait, 10)
        served = await get(handler)  # served while the first still waits in its thread
        finished_while_held = len(seen.finished)
        seen.release()
        return await held, served, finished_while_held

    assert asyncio.run(one_held_and_one_served()) == (200, 200, 1)
    assert len(set(seen.started)) == 2


def test_threads_beyond_those_kept_close_their_connections(seen, handler):
    handler.threads.keep = 1

    async def two_at_once():
        seen.hold_next = True
        held = asyncio.create_task(get(handler))
        await asyncio.to_thread(seen.holding.wait, 10)
        served = await get(handler)
        seen.release()
        return [await held, served]

    assert asyncio.run(two_at_once()) == [200, 200]
    assert len(handler.threads.idle) == 1
    handler.threads.idle[0].submit(lambda: None).result(timeout=10)
    wrappers = {thread: wrapper for thread, wrapper, _ in seen.finished}
    assert len(wrappers) == 2
    # The thread given back second, beyond the one kept, closes its connection as it ends
    # (after its request is answered: nothing waits for it).
    deadline = time.monotonic() + 10
    while (
        sum(wrapper.connection is None for wrapper in wrappers.values()) < 1 and time.monotonic() < deadline
    ):
        time.sleep(0.01)
    assert sorted(wrapper.connection is None for wrapper in wrappers.values()) == [False, True]
