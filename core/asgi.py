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
"""

from asgiref.sync import sync_to_async
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler
from django.http import HttpResponse, JsonResponse

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


class LimitedASGIHandler(ASGIHandler):
    def __init__(self):
        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)

    async def get_response_async(self, request):
        return await sync_to_async(self.get_response, thread_sensitive=True)(request)

    async def handle(self, scope, receive, send):
        limit = setting("KINDGI_MAX_REQUEST_BYTES")
        return await super().handle(scope, _Counted(receive, limit, _content_length(scope)), send)

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
