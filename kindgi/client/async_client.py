"""``kindgi.AsyncClient``: the API, awaited. The same operations as ``kindgi.Client``, each a
coroutine; lists and ``watch`` are async iterators.

    from kindgi import AsyncClient

    async with AsyncClient() as kindgi:
        run = await kindgi.runs.start(flow_id="my-pack.check-order", input={"orderId": "ord_1001"})
        run = await kindgi.runs.wait(run.id)
"""

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from contextlib import aclosing
from typing import Any

from websockets.asyncio.client import connect
from websockets.exceptions import WebSocketException

from kindgi.client import models, operations
from kindgi.client.config import resolve
from kindgi.client.models import FINISHED
from kindgi.client.stream import QUIET, Deadline, Resumption, statuses
from kindgi.client.transport import AsyncTransport, RetryPolicy, awaitable


class _Resource:
    def __init__(self, transport: AsyncTransport):
        self._transport = transport

    async def _every(
        self, listing: Callable[..., operations.Operation], **filters: Any
    ) -> AsyncIterator[Any]:
        """Each item of every page of ``listing``, page after page as they are read."""
        cursor = None
        while True:
            page = await self._transport.send(listing(**filters, cursor=cursor))
            for item in page.items:
                yield item
            if not page.next_cursor:
                return
            cursor = page.next_cursor


class Runs(_Resource):
    start = awaitable(operations.start_run)
    get = awaitable(operations.get_run)
    page = awaitable(operations.list_runs)
    journal_page = awaitable(operations.journal_page)
    cancel = awaitable(operations.cancel_run)

    def list(
        self,
        *,
        status: str | None = None,
        flow_id: str | None = None,
        agent_id: str | None = None,
        page_size: int | None = None,
    ) -> AsyncIterator[models.Run]:
        """Every run that matches, newest first, reading a page at a time."""
        return self._every(
            operations.list_runs, status=status, flow_id=flow_id, agent_id=agent_id, limit=page_size
        )

    async def journal(self, run_id: str, *, after: int = 0) -> AsyncIterator[models.JournalEntry]:
        """The run's journal entries after ``after``, in order, a page at a time."""
        while True:
            page = await self.journal_page(run_id, after=after)
            for entry in page.items:
                yield entry
            if not page.next_cursor:
                return
            after = int(page.next_cursor)

    def watch(
        self,
        run_id: str,
        *,
        after: int = 0,
        until: str | Iterable[str] = FINISHED,
        timeout: float | None = None,
    ) -> AsyncIterator[models.JournalEvent]:
        """The run's journal entries after ``after`` (and its steps' runs'), then each new one
        as it is written, until the run's status is one of ``until``. A dropped socket is opened
        again where it stopped; nothing is missed or given twice. ``timeout``: seconds without
        news before ``TimeoutError``."""
        stream = Resumption(self._transport.settings.url, run_id, after=after, until=until, timeout=timeout)
        return self._follow(stream)

    async def _follow(self, stream: Resumption) -> AsyncGenerator[models.JournalEvent]:
        while not stream.done:
            try:
                async with connect(
                    stream.url(), additional_headers=self._transport.socket_headers, logger=QUIET
                ) as socket:
                    while not stream.done:
                        if (event := stream.take(await _receive(socket, stream))) is not None:
                            yield event
            except (OSError, WebSocketException) as error:
                await asyncio.sleep(stream.after_drop(error, self._transport.retry))

    async def wait(
        self, run_id: str, *, until: str | Iterable[str] = FINISHED, timeout: float | None = None
    ) -> models.RunDetail:
        """The run, once its status is one of ``until`` (by default: finished) or it finished.
        It goes on through a suspension (an approval) unless ``until`` names ``suspended``.
        ``timeout``: seconds before ``TimeoutError``, however often the stream is reopened."""
        wanted, deadline = statuses(until), Deadline(timeout)
        while (run := await self.get(run_id)).status not in wanted | FINISHED:
            deadline.check(run)
            stream = Resumption(
                self._transport.settings.url, run_id, after=0, until=wanted, timeout=None, deadline=deadline
            )
            async with aclosing(self._follow(stream)) as events:
                async for _event in events:
                    pass
        return run


async def _receive(socket, stream: Resumption) -> str | bytes:
    try:
        return await asyncio.wait_for(socket.recv(), stream.receive_timeout())
    except TimeoutError:
        raise stream.silence() from None


class Approvals(_Resource):
    page = awaitable(operations.list_approvals)
    get = awaitable(operations.get_approval)
    complete = awaitable(operations.complete_approval)
    bulk_complete = awaitable(operations.complete_approvals)

    def list(
        self, *, status: str | None = None, run_id: str | None = None, page_size: int | None = None
    ) -> AsyncIterator[models.Approval]:
        """Every approval that matches, newest first."""
        return self._every(operations.list_approvals, status=status, run_id=run_id, limit=page_size)

    async def approve(self, approval_id: str, *, rationale: str = "", **more: Any) -> models.Completion:
        """``complete(approval_id, decision="approve", …)``."""
        return await self.complete(approval_id, decision="approve", rationale=rationale, **more)

    async def reject(self, approval_id: str, *, rationale: str, **more: Any) -> models.Completion:
        """``complete(approval_id, decision="reject", …)``: the tool does not run."""
        return await self.complete(approval_id, decision="reject", rationale=rationale, **more)

    async def request_changes(self, approval_id: str, *, note: str, **more: Any) -> models.Completion:
        """``complete(approval_id, decision="request_changes", rationale=note)``: the model reads
        ``note`` as the call's result and may propose another call."""
        return await self.complete(approval_id, decision="request_changes", rationale=note, **more)


class Reviewers(_Resource):
    register = awaitable(operations.register_reviewer)
    me = awaitable(operations.reviewer_me)
    update_me = awaitable(operations.update_reviewer_me)
    page = awaitable(operations.list_reviewers)

    def list(self, *, page_size: int | None = None) -> AsyncIterator[models.Reviewer]:
        return self._every(operations.list_reviewers, limit=page_size)


class Rules(_Resource):
    page = awaitable(operations.list_rules)
    get = awaitable(operations.get_rule)
    create = awaitable(operations.create_rule)
    update = awaitable(operations.update_rule)
    delete = awaitable(operations.delete_rule)

    def list(self, *, page_size: int | None = None) -> AsyncIterator[models.ApprovalRule]:
        return self._every(operations.list_rules, limit=page_size)


class Schedules(_Resource):
    page = awaitable(operations.list_schedules)
    get = awaitable(operations.get_schedule)
    create = awaitable(operations.create_schedule)
    update = awaitable(operations.update_schedule)
    delete = awaitable(operations.delete_schedule)

    def list(self, *, page_size: int | None = None) -> AsyncIterator[models.Schedule]:
        return self._every(operations.list_schedules, limit=page_size)


class Grants(_Resource):
    page = awaitable(operations.list_grants)
    create = awaitable(operations.create_grant)
    revoke = awaitable(operations.revoke_grant)

    def list(self, *, page_size: int | None = None) -> AsyncIterator[models.Grant]:
        return self._every(operations.list_grants, limit=page_size)


class Catalog(_Resource):
    """The tools, agents and flows in service, and the MCP servers behind some tools."""

    tools_page = awaitable(operations.list_tools)
    tool = awaitable(operations.get_tool)
    agents_page = awaitable(operations.list_agents)
    agent = awaitable(operations.get_agent)
    flows_page = awaitable(operations.list_flows)
    flow = awaitable(operations.get_flow)
    mcp_servers = awaitable(operations.list_mcp_servers)

    def tools(self) -> AsyncIterator[models.Tool]:
        return self._every(operations.list_tools)

    def agents(self) -> AsyncIterator[models.Agent]:
        return self._every(operations.list_agents)

    def flows(self) -> AsyncIterator[models.Flow]:
        return self._every(operations.list_flows)


class Connections(_Resource):
    """Your connections to outside apps."""

    apps = awaitable(operations.list_apps)
    list = awaitable(operations.list_connections)
    get = awaitable(operations.get_connection)
    connect = awaitable(operations.connect_app)
    remove = awaitable(operations.remove_connection)


class Audit(_Resource):
    page = awaitable(operations.list_audit)
    heads = awaitable(operations.audit_heads)

    def list(self, **filters: Any) -> AsyncIterator[models.AuditEntry]:
        """Every entry that matches ``filters`` (``list_audit``'s: action, actor, surface…)."""
        return self._every(operations.list_audit, **filters)


class AsyncClient:
    """Kindgi's API, awaited. ``url`` and ``token`` default to ``KINDGI_URL`` and ``KINDGI_TOKEN``, then to
    what ``kindgi dev`` saved. API errors raise ``kindgi.client.ApiError`` (its ``status``,
    ``code``, ``message`` and ``details``); a server that does not answer,
    ``ServerUnreachableError``, after ``retries`` more tries."""

    def __init__(
        self,
        url: str | None = None,
        token: str | None = None,
        *,
        timeout: float = 120.0,
        retries: int = 3,
        backoff: float = 0.5,
        user_agent: str | None = None,
    ):
        self._transport = AsyncTransport(
            resolve(url, token),
            timeout=timeout,
            retry=RetryPolicy(retries=retries, backoff=backoff),
            user_agent=user_agent,
        )
        self.runs = Runs(self._transport)
        self.approvals = Approvals(self._transport)
        self.reviewers = Reviewers(self._transport)
        self.rules = Rules(self._transport)
        self.schedules = Schedules(self._transport)
        self.grants = Grants(self._transport)
        self.catalog = Catalog(self._transport)
        self.connections = Connections(self._transport)
        self.audit = Audit(self._transport)

    @property
    def url(self) -> str:
        return self._transport.settings.url

    async def close(self) -> None:
        await self._transport.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()
