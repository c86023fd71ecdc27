"""``/mcp``: Kindgi's flows and agents for MCP clients, over streamable HTTP.

The caller authenticates as for the API, with a tenant user's API token (``Authorization:
Bearer kgi_…``); a request without a valid one gets 401 before the MCP SDK sees it. The SDK's
session manager runs stateless (nothing is kept between requests, so any web process can answer
any request) and answers in JSON. It starts with the first request, on that process's loop:
daphne sends no ASGI lifespan events.

Only POST is served. Stateless, the endpoint has no session to end (DELETE) and nothing of its own
to say between requests, so it offers no stream for a GET: the streamable HTTP transport says to
answer such a GET with 405, which clients take as "use POST alone". Left to the SDK, a GET would
open an event stream that never sends anything, and the caller would wait forever.
"""

import asyncio
import contextvars
import json
import time
from dataclasses import dataclass

import mcp_types
from channels.db import database_sync_to_async
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from core.api.errors import error_body
from core.api.permissions import NO_TENANT
from core.conf import setting
from core.secrets import provider_secrets, scrub_secrets_in_json
from kindgi_site.mcp.offer import CallAnswer, answer_for, offered, start, still_going
from tenants.models import Membership
from tenants.tokens import active_token, bearer_token


@dataclass(frozen=True)
class Caller:
    user: object
    tenant: object
    # The token it called with: a service account's names whom its runs are for.
    token: object = None


_CALLER: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("kindgi_mcp_caller", default=None)
CALLER_SCOPE_KEY = "kindgi.mcp_caller"


def _caller_of(ctx) -> Caller:
    caller = _CALLER.get()
    if caller is None and ctx.request is not None:
        caller = ctx.request.scope.get(CALLER_SCOPE_KEY)
    if caller is None:  # the endpoint lets no request through without one
        raise PermissionError("no authenticated caller")
    return caller


async def _list_tools(ctx, params) -> mcp_types.ListToolsResult:
    _caller_of(ctx)
    tools = [
        mcp_types.Tool(
            name=offer.name,
            title=offer.title,
            description=offer.description,
            input_schema=offer.input_schema,
            annotations=mcp_types.ToolAnnotations(
                title=offer.title, read_only_hint=offer.read_only, open_world_hint=not offer.read_only
            ),
        )
        for offer in offered()
    ]
    return mcp_types.ListToolsResult(tools=tools)


async def _call_tool(ctx, params: mcp_types.CallToolRequestParams) -> mcp_types.CallToolResult:
    caller = _caller_of(ctx)
    if "\\u0000" in json.dumps([params.name, params.arguments]):
        # As the API refuses it: no database takes a NUL in text.
        return _error_result("the call holds a NUL character (\\u0000), which cannot be stored")
    started = await database_sync_to_async(start)(
        name=params.name,
        arguments=params.arguments or {},
        user=caller.user,
        tenant=caller.tenant,
        token=caller.token,
    )
    answer = started if isinstance(started, CallAnswer) else await _answer_when_ready(started)
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=json.dumps(answer.data, indent=2))],
        structured_content=answer.data,
        is_error=answer.is_error,
    )


def _error_result(message: str) -> mcp_types.CallToolResult:
    return mcp_types.CallToolResult(
        content=[mcp_types.TextContent(type="text", text=message)], structured_content=None, is_error=True
    )


async def _answer_when_ready(run) -> CallAnswer:
    """Wait (without holding a thread) until the run ends or waits for a person, or until the
    call's time is up, then say where it stands."""
    deadline = time.monotonic() + setting("KINDGI_MCP_CALL_WAIT_SECONDS")
    while time.monotonic() < deadline and await database_sync_to_async(still_going)(run):
        await asyncio.sleep(POLL_SECONDS)
    return await database_sync_to_async(answer_for)(run)


POLL_SECONDS = 0.2

SERVER = Server(
    "kindgi",
    version="0.1.0",
    instructions=(
        "Each tool runs one of Kindgi's flows or agents as a run. A run that reaches a call a "
        "person must approve answers with the approval it waits for and its runId; it goes on "
        "once a reviewer decides."
    ),
    on_list_tools=_list_tools,
    on_call_tool=_call_tool,
)


def _identify(authorization: str) -> Caller | str:
    """The caller the header's token names, or why there is none (``unauthenticated``, or
    ``forbidden``: the token's user belongs to no tenant)."""
    token = bearer_token(authorization)
    record = active_token(token) if token else None
    if record is None:
        return "unauthenticated"
    membership = Membership.objects.select_related("tenant").filter(user=record.user).first()
    if membership is None:
        return "forbidden"
    return Caller(user=record.user, tenant=membership.tenant, token=record)


async def _refuse(send, status: int, code: str, message: str) -> None:
    body = json.dumps(error_body(code, message)).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="kindgi"'))
    if status == 405:
        headers.append((b"allow", ALLOWED_METHOD.encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


ALLOWED_METHOD = "POST"


class McpEndpoint:
    """The ASGI application at ``/mcp``."""

    def __init__(self):
        self._manager: StreamableHTTPSessionManager | None = None
        self._started: asyncio.Event | None = None
        self._lock = asyncio.Lock()

    async def _running_manager(self) -> StreamableHTTPSessionManager:
        async with self._lock:
            if self._manager is None:
                manager = StreamableHTTPSessionManager(app=SERVER, stateless=True, json_response=True)
                started = asyncio.Event()

                async def run() -> None:
                    async with manager.run():
                        started.set()
                        await asyncio.Event().wait()  # for the life of the process

                self._task = asyncio.get_running_loop().create_task(run())
                await started.wait()
                self._manager = manager
            return self._manager

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return
        headers = dict(scope.get("headers", []))
        caller = await database_sync_to_async(_identify)(headers.get(b"authorization", b"").decode("latin-1"))
        if caller == "unauthenticated":
            message = "send a tenant user's API token: Authorization: Bearer kgi_…"
            await _refuse(send, 401, "unauthenticated", message)
            return
        if caller == "forbidden":
            await _refuse(send, 403, "forbidden", NO_TENANT)
            return
        if scope["method"] != ALLOWED_METHOD:
            message = f'Method "{scope["method"]}" not allowed: send MCP messages with POST'
            await _refuse(send, 405, "method_not_allowed", message)
            return
        manager = await self._running_manager()
        token = _CALLER.set(caller)
        try:
            await manager.handle_request({**scope, CALLER_SCOPE_KEY: caller}, receive, _scrubbing(send))
        finally:
            _CALLER.reset(token)


def _scrubbing(send):
    """``send``, with the configured provider keys taken out of the answer: the SDK echoes what it
    was sent (an unknown tool's name, a request's id) in its errors, as the API's errors would,
    and the API's are scrubbed (``core.secrets``). The answer is one JSON body, held until whole
    so that its length can be said again."""
    if not provider_secrets():
        return send
    held: dict = {}
    chunks: list[bytes] = []

    async def scrubbed(message) -> None:
        if message["type"] == "http.response.start":
            held.update(message)
            return
        if message["type"] != "http.response.body":
            await send(message)
            return
        chunks.append(message.get("body", b""))
        if message.get("more_body"):
            return
        body = scrub_secrets_in_json(b"".join(chunks).decode(errors="surrogateescape"))
        body = body.encode(errors="surrogateescape")
        headers = [(name, value) for name, value in held["headers"] if name.lower() != b"content-length"]
        await send({**held, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})

    return scrubbed


endpoint = McpEndpoint()
