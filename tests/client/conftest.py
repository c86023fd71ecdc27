"""The Python client against a live `kindgi dev` on loopback: its own SQLite database, its
development admin (a tenant admin and a reviewer) and the token it saved. Each test runs with
``kindgi.Client`` and again with ``kindgi.AsyncClient``."""

import asyncio
import inspect

import pytest

from kindgi import AsyncClient, Client
from tests.dev_server import kindgi_dev
from tests.flaky_proxy import FlakyProxy


@pytest.fixture(scope="session")
def dev_server(tmp_path_factory):
    """A `kindgi dev` shared by the client's tests."""
    with kindgi_dev(tmp_path_factory.mktemp("kindgi-dev")) as served:
        yield served


@pytest.fixture(scope="session")
def dev(dev_server):
    """Its URL and token."""
    return dev_server.url, dev_server.token


@pytest.fixture
def direct(dev):
    """A blocking client straight to the server, for what a test does beside the client it tests."""
    with Client(*dev) as client:
        yield client


class Awaited:
    """An ``AsyncClient`` (or one of its parts) driven from a test as if it blocked: each
    coroutine is run to its end on the client's own loop, each async iterator read an item at a
    time. The tests are written once, and run against both clients."""

    def __init__(self, target, loop: asyncio.AbstractEventLoop):
        self._target, self._loop = target, loop

    def __getattr__(self, name: str):
        value = getattr(self._target, name)
        if not callable(value):
            return Awaited(value, self._loop) if hasattr(value, "_transport") else value

        def call(*args, **kwargs):
            result = value(*args, **kwargs)
            if inspect.iscoroutine(result):
                return self._loop.run_until_complete(result)
            if inspect.isasyncgen(result):
                return self._each(result)
            return result

        return call

    def _each(self, items):
        try:
            while True:
                yield self._loop.run_until_complete(anext(items))
        except StopAsyncIteration:
            return
        finally:
            self._loop.run_until_complete(items.aclose())


@pytest.fixture(params=["Client", "AsyncClient"])
def connect(request):
    """``connect(url, token, **options)``: a client of the kind the test runs with."""
    opened = []

    def open_client(url, token, **options):
        if request.param == "Client":
            client = Client(url, token, **options)
            opened.append(client.close)
            return client
        loop = asyncio.new_event_loop()
        client = AsyncClient(url, token, **options)
        opened.append(lambda: (loop.run_until_complete(client.close()), loop.close()))
        return Awaited(client, loop)

    yield open_client
    for close in opened:
        close()


@pytest.fixture
def kindgi(connect, dev):
    return connect(*dev)


@pytest.fixture
def proxy(dev):
    flaky = FlakyProxy(dev[0])
    yield flaky
    flaky.close()
