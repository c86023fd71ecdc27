"""Talking to MCP servers from Kindgi's synchronous code, one connection per server per process.

The ``mcp`` SDK is asynchronous and a connection (a stdio subprocess, an HTTP session) is worth
keeping: each process runs one event loop in a thread of its own, holds one connection per
server spec there, and every thread's call is handed to that loop. A connection that fails is
dropped and the next call opens a new one; a call never waits longer than its timeout.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from core.conf import setting
from tools.mcp.specs import ServerSpec, ServerSpecError, is_public

if TYPE_CHECKING:  # the SDK is imported when a server is first reached, not with Django
    import mcp_types
    from mcp import Client

logger = logging.getLogger("kindgi.mcp")

# A listing that never ends must not hang a refresh.
LISTING_PAGE_LIMIT = 50


class McpUnavailable(Exception):
    """The server could not be reached, or the connection broke: the message says how."""


class McpTimeout(Exception):
    """The server did not answer within the time allowed."""


class McpRefused(Exception):
    """The server answered the request with a protocol error (an unknown method, bad params)."""


class _Connection:
    """One open session with one server, held by a task of its own on the pool's loop (the SDK
    wants a session entered and left in the same task)."""

    def __init__(self, spec: ServerSpec):
        self.spec = spec
        self._client: Client | None = None
        self._lock = asyncio.Lock()
        self._closed: asyncio.Event | None = None
        self._holder: asyncio.Task | None = None

    async def live_client(self) -> Client:
        """The session, opened anew first if the server went away while it sat idle (a stdio
        server that exited): a call (one a person approved, perhaps) is then not spent on a
        connection that was already gone, and it is never sent twice, since a session known to be
        closed sends nothing."""
        client = await self.client()
        if _closed_already(client):
            self.drop()
            client = await self.client()
        return client

    async def client(self) -> Client:
        async with self._lock:
            if self._client is None:
                ready: asyncio.Future = asyncio.get_running_loop().create_future()
                self._closed = asyncio.Event()
                self._holder = asyncio.create_task(self._hold(ready, self._closed))
                try:
                    self._client = await ready
                except BaseException:
                    self._closed.set()  # given up on (a timeout): a late session must not linger
                    raise
            return self._client

    async def _hold(self, ready: asyncio.Future, closed: asyncio.Event) -> None:
        import mcp_types
        from mcp import Client

        http = None
        try:
            transport, http = _transport(self.spec)
            client_info = mcp_types.Implementation(name="kindgi", version="0.1.0")
            async with Client(transport, client_info=client_info) as client:
                ready.set_result(client)
                await closed.wait()
        except BaseException as error:  # the SDK raises groups; any of them ends this session
            if not ready.done():
                ready.set_exception(McpUnavailable(_describe(error)))
            else:
                logger.info("MCP server %s: the connection ended: %s", self.spec.name, _describe(error))
        finally:
            if self._closed is closed:
                self._client = None
            if http is not None:  # the SDK leaves a client it was given open
                await http.aclose()

    def drop(self) -> None:
        """Close the session; the next call opens a new one."""
        if self._closed is not None:
            self._closed.set()
        self._client = None


def _closed_already(client: Client) -> bool:
    """Whether the session has seen its transport end (the server's stdout closed). The SDK keeps
    this to itself and has no ping under the 2026 protocol, so it is read where the SDK keeps it;
    a version that moves it reads as open, and the call fails as it did before (see
    tests/mcp/test_mcp_tools.py, which would then fail)."""
    dispatcher = getattr(client.session, "_dispatcher", None)
    return getattr(dispatcher, "_closed", False) is True


def _transport(spec: ServerSpec):
    """The SDK's transport for ``spec``, and the HTTP client to close with it (None for stdio)."""
    import httpx2
    from mcp import StdioServerParameters
    from mcp.client.streamable_http import streamable_http_client

    if spec.command:
        parameters = StdioServerParameters(
            command=spec.command[0], args=list(spec.command[1:]), env=spec.resolved_env() or None
        )
        return parameters, None
    options = {} if spec.private_allowed else {"transport": _public_only_transport(), "trust_env": False}
    http = httpx2.AsyncClient(
        headers=spec.resolved_headers(),
        timeout=httpx2.Timeout(setting("KINDGI_MCP_TIMEOUT_SECONDS"), read=300),
        **options,
    )
    return streamable_http_client(spec.url, http_client=http), http


def _public_only_transport():
    """An HTTP transport that connects only to public addresses: each name is resolved when a
    connection is made and refused if any address it resolves to is not public, and the connection
    goes to the very address checked, so a name that changes its address between the check and
    the connection (DNS rebinding) gains nothing. TLS still names the host (SNI)."""
    import httpcore2
    import httpx2

    class PublicOnly(httpcore2.AsyncNetworkBackend):
        def __init__(self, inner):
            self._inner = inner

        async def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
            infos = await asyncio.get_running_loop().getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
            addresses = [info[4][0] for info in infos]
            refused = [address for address in addresses if not is_public(address)]
            if refused or not addresses:
                raise httpcore2.ConnectError(
                    f"{host} is {refused[0] if refused else 'no address'}, not a public address: a tenant's "
                    "server may not be on this machine or its network"
                )
            return await self._inner.connect_tcp(
                addresses[0],
                port,
                timeout=timeout,
                local_address=local_address,
                socket_options=socket_options,
            )

        async def connect_unix_socket(self, path, timeout=None, socket_options=None):
            raise httpcore2.ConnectError("a tenant's server is reached over the network only")

        async def sleep(self, seconds):
            await self._inner.sleep(seconds)

    transport = httpx2.AsyncHTTPTransport(trust_env=False)
    # httpx takes no network backend of its own: its pool's is the one place every connection opens.
    transport._pool._network_backend = PublicOnly(transport._pool._network_backend)
    return transport


def _describe(error: BaseException) -> str:
    """The innermost useful words of an error the SDK may have wrapped in exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, McpUnavailable | ServerSpecError):
        return str(error)
    text = str(error).strip()
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


class McpPool:
    """The process's connections to MCP servers. Safe to call from any thread."""

    def __init__(self):
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connections: dict[str, _Connection] = {}

    def _run(self, coroutine: Coroutine, timeout: float) -> Any:
        with self._lock:
            if self._loop is None or self._loop.is_closed():
                self._loop = asyncio.new_event_loop()
                threading.Thread(target=self._loop.run_forever, name="kindgi-mcp", daemon=True).start()
            loop = self._loop
        future = asyncio.run_coroutine_threadsafe(coroutine, loop)
        try:
            return future.result(timeout + 1)  # the coroutine keeps its own timeout; this is a backstop
        except TimeoutError:
            future.cancel()
            raise McpTimeout(f"no answer within {timeout:g} s") from None

    def _connection(self, spec: ServerSpec) -> _Connection:
        with self._lock:
            connection = self._connections.get(spec.key)
            if connection is None:
                connection = self._connections[spec.key] = _Connection(spec)
            return connection

    def list_tools(self, spec: ServerSpec, *, timeout: float | None = None) -> list[mcp_types.Tool]:
        """Every tool the server lists now (following its pages)."""
        timeout = timeout or setting("KINDGI_MCP_TIMEOUT_SECONDS")
        connection = self._connection(spec)

        async def listing(client: Client) -> list[mcp_types.Tool]:
            tools, cursor = [], None
            for _ in range(LISTING_PAGE_LIMIT):
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                tools.extend(page.tools)
                cursor = page.next_cursor
                if cursor is None:
                    break
            return tools

        return self._run(self._with_client(connection, listing, timeout), timeout)

    def call_tool(
        self, spec: ServerSpec, name: str, arguments: dict[str, Any], *, timeout: float | None = None
    ) -> mcp_types.CallToolResult:
        """The server's result for one call. Raises ``McpUnavailable``, ``McpTimeout``, or
        ``McpRefused`` when the server refuses the request itself."""
        timeout = timeout or setting("KINDGI_MCP_TIMEOUT_SECONDS")
        connection = self._connection(spec)

        async def call(client: Client) -> mcp_types.CallToolResult:
            return await client.call_tool(name, arguments, read_timeout_seconds=timeout)

        return self._run(self._with_client(connection, call, timeout, live=True), timeout)

    async def _with_client(self, connection: _Connection, use, timeout: float, *, live: bool = False) -> Any:
        import mcp_types
        from mcp import MCPError

        try:
            async with asyncio.timeout(timeout):
                return await use(await (connection.live_client() if live else connection.client()))
        except TimeoutError:
            raise McpTimeout(f"no answer within {timeout:g} s") from None
        except MCPError as error:
            if error.code != mcp_types.CONNECTION_CLOSED:
                # The server answered, with a protocol error: the session is fine.
                raise McpRefused(error.message) from None
            connection.drop()
            raise McpUnavailable("the connection to the server closed during the call") from None
        except (McpUnavailable, ServerSpecError) as error:
            connection.drop()
            raise McpUnavailable(str(error)) from None
        except Exception as error:
            connection.drop()
            raise McpUnavailable(_describe(error)) from None

    def close(self) -> None:
        """Close every connection (tests, and a process that is shutting down)."""
        with self._lock:
            connections, self._connections = list(self._connections.values()), {}
            loop = self._loop
        if loop is None or loop.is_closed():
            return
        for connection in connections:
            loop.call_soon_threadsafe(connection.drop)


POOL = McpPool()
