"""Django's ASGI handler, holding request bodies to ``KINDGI_MAX_REQUEST_BYTES`` however they
are sent.

A body whose Content-Length says it is too large is refused before it is read; one sent in
chunks (no Content-Length) is counted as it arrives and refused once it passes the limit. Both
get 413 with the API's error body. A chunked body within the limit is given the length it
turned out to have, so that the API reads it (DRF reads no body whose length is unknown).

Every view and middleware here is synchronous, so the handler runs them as WSGI would, in one
hop to a thread. Django's own ASGI handler loads the middleware for async and so calls each
one's hooks through a hop of its own: some twenty hops a request, which took `/healthz` through
daphne from 4 ms to 8.

That thread is taken from the idle ones a request left (``RequestThreads``), as a threaded WSGI
server's would be, where Django's handler starts a new one for each request. A request's
database connection is its thread's, so a new thread also meant a new connection: on SQLite,
about 2 ms of each API call went on opening one and reading the schema again.
"""

import contextlib
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.handlers.base import BaseHandler
from django.db import connections
from django.http import HttpResponse, JsonResponse
from django.urls import set_script_prefix

from core.api.errors import error_body
from core.conf import setting


class _TooLarge:
    """What ``read_body`` returns for a body over the limit: nothing of it is kept."""

    def close(self) -> None:
        pass


def too_large_response(path: str, limit: int) -> HttpResponse:
    message = f"the request body is larger than the limit of {limit} bytes"
    if path.startswith("/api/"):
        return JsonResponse(error_body("too_large", message), status=413)
    return HttpResponse(f"413 Payload Too Large: {message}", status=413, content_type="text/plain")


class RequestThreads:
    """Threads that serve requests, each one request at a time from its start to its end.

    A request takes an idle thread, or a new one if none is idle, so no request waits for
    another to finish (a run started through the API may execute for as long as its tools
    take). Up to ``keep`` threads are kept idle between requests, with their connections; a
    thread beyond those closes its connections and ends. Used from one event loop only."""

    def __init__(self, keep: int):
        self.keep = keep
        self.idle: list[ThreadPoolExecutor] = []

    @contextlib.asynccontextmanager
    async def one(self) -> AsyncIterator[ThreadPoolExecutor]:
        thread = self.idle.pop() if self.idle else ThreadPoolExecutor(1, thread_name_prefix="kindgi-request")
        try:
            yield thread
        finally:
            # A request cancelled while its view still runs gives its thread back busy: the
            # next request's work queues behind that view's in the one thread.
            if len(self.idle) < self.keep:
                self.idle.append(thread)
            else:
                thread.submit(connections.close_all)
                thread.shutdown(wait=False)


# Enough for the requests one process serves at once in the common case; a burst above it
# gets threads of its own, as every request used to.
IDLE_REQUEST_THREADS = 16


class LimitedASGIHandler(ASGIHandler):
    def __init__(self):
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self.threads = RequestThreads(keep=IDLE_REQUEST_THREADS)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        await self.handle(scope, receive, send)

    async def handle(self, scope, receive, send):
        """Django's ``handle`` with every synchronous part of a request (the request_started
        signal, the middleware and view, closing the response and so request_finished) in one
        thread of ``RequestThreads``: its connections are opened, checked and closed where
        they are used, as under WSGI. A response for a client that has gone is dropped by the
        server; a synchronous view cannot be stopped part way anyway."""
        limit = setting("KINDGI_MAX_REQUEST_BYTES")
        try:
            body_file = await self.read_body(_Counted(receive, limit, _content_length(scope)))
        except RequestAborted:
            return
        async with self.threads.one() as thread:
            with contextlib.closing(body_file):
                response = await sync_to_async(self._respond, thread_sensitive=False, executor=thread)(
                    scope, body_file
                )
                await self.send_response(response, send)
                await sync_to_async(response.close, thread_sensitive=False, executor=thread)()

    def _respond(self, scope, body_file) -> HttpResponse:
        set_script_prefix(get_script_prefix(scope))
        signals.request_started.send(sender=self.__class__, scope=scope)
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            return error_response
        response = self.get_response(request)
        response._handler_class = self.__class__
        return response

    async def read_body(self, receive):
        if receive.declared_too_large:
            return _TooLarge()
        body_file = await super().read_body(receive)
        if receive.too_large:
            body_file.close()
            return _TooLarge()
        return body_file

    def create_request(self, scope, body_file):
        if isinstance(body_file, _TooLarge):
            return None, too_large_response(scope["path"], setting("KINDGI_MAX_REQUEST_BYTES"))
        request, error = super().create_request(scope, body_file)
        if request is not None and "CONTENT_LENGTH" not in request.META:
            size = body_file.seek(0, 2)
            body_file.seek(0)
            if size:
                request.META["CONTENT_LENGTH"] = str(size)
        return request, error


def _content_length(scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class _Counted:
    """``receive``, passing body chunks on until they add up past ``limit``; past it, it keeps
    reading (so that the client can be answered) and drops them."""

    def __init__(self, receive, limit: int, declared: int | None):
        self.receive = receive
        self.limit = limit
        self.seen = 0
        self.declared_too_large = declared is not None and declared > limit
        self.too_large = False

    async def __call__(self):
        message = await self.receive()
        if message.get("type") == "http.request" and message.get("body"):
            self.seen += len(message["body"])
            if self.seen > self.limit:
                self.too_large = True
                message = {**message, "body": b""}
        return message
