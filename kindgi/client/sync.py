"""``kindgi.Client``: the API, blocking.

from kindgi import Client

with Client() as kindgi:   # KINDGI_URL and KINDGI_TOKEN, or what `kindgi dev` saved
    run = kindgi.runs.start(flow_id="my-pack.check-order", input={"orderId": "ord_1001"})
    run = kindgi.runs.wait(run.id)
"""

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from websockets.exceptions import WebSocketException
from websockets.sync.client import connect

from kindgi.client import models, operations
from kindgi.client.config import resolve
from kindgi.client.models import FINISHED
from kindgi.client.stream import QUIET, Deadline, Resumption, statuses
from kindgi.client.transport import RetryPolicy, Transport, blocking


class _Resource:
    def __init__(self, transport: Transport):
        self._transport = transport

    def _every(self, listing: Callable[..., operations.Operation], **filters: Any) -> Iterator[Any]:
        """Each item of every page of ``listing``, page after page as they are read."""
        cursor = None
        while True:
            page = self._transport.send(listing(**filters, cursor=cursor))
            yield from page.items
            if not page.next_cursor:
                return
            cursor = page.next_cursor


class Runs(_Resource):
    start = blocking(operations.start_run)
    get = blocking(operations.get_run)
    page = blocking(operations.list_runs)
    journal_page = blocking(operations.journal_page)
    cancel = blocking(operations.cancel_run)

    def list(
        self,
        *,
        status: str | None = None,
        flow_id: str | None = None,
        agent_id: str | None = None,
        page_size: int | None = None,
    ) -> Iterator[models.Run]:
        """Every run that matches, newest first, reading a page at a time."""
        return self._every(
            operations.list_runs, status=status, flow_id=flow_id, agent_id=agent_id, limit=page_size
        )

    def journal(self, run_id: str, *, after: int = 0) -> Iterator[models.JournalEntry]:
        """The run's journal entries after ``after``, in order, a page at a time."""
        while True:
            page = self.journal_page(run_id, after=after)
            yield from page.items
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
    ) -> Iterator[models.JournalEvent]:
        """The run's journal entries after ``after`` (and its steps' runs'), then each new one
        as it is written, until the run's status is one of ``until``. A dropped socket is opened
        again where it stopped; nothing is missed or given twice. ``timeout``: seconds without
        news before ``TimeoutError``."""
        stream = Resumption(self._transport.settings.url, run_id, after=after, until=until, timeout=timeout)
        return self._follow(stream)

    def _follow(self, stream: Resumption) -> Iterator[models.JournalEvent]:
        while not stream.done:
            try:
                with connect(
                    stream.url(), additional_headers=self._transport.socket_headers, logger=QUIET
                ) as socket:
                    while not stream.done:
                        if (event := stream.take(_receive(socket, stream))) is not None:
                            yield event
            except (OSError, WebSocketException) as error:
                time.sleep(stream.after_drop(error, self._transport.retry))

    def wait(
        self, run_id: str, *, until: str | Iterable[str] = FINISHED, timeout: float | None = None
    ) -> models.RunDetail:
        """The run, once its status is one of ``until`` (by default: finished) or it finished.
        It goes on through a suspension (an approval) unless ``until`` names ``suspended``.
        ``timeout``: seconds before ``TimeoutError``, however often the stream is reopened."""
        wanted, deadline = statuses(until), Deadline(timeout)
        while (run := self.get(run_id)).status not in wanted | FINISHED:
            deadline.check(run)
            stream = Resumption(
                self._transport.settings.url, run_id, after=0, until=wanted, timeout=None, deadline=deadline
            )
            for _event in self._follow(stream):
                pass
        return run


def _receive(socket, stream: Resumption) -> str | bytes:
    try:
        return socket.recv(timeout=stream.receive_timeout())
    except TimeoutError:
        raise stream.silence() from None


class Approvals(_Resource):
    page = blocking(operations.list_approvals)
    get = blocking(operations.get_approval)
    complete = blocking(operations.complete_approval)
    bulk_complete = blocking(operations.complete_approvals)

    def list(
        self, *, status: str | None = None, run_id: str | None = None, page_size: int | None = None
    ) -> Iterator[models.Approval]:
        """Every approval that matches, newest first."""
        return self._every(operations.list_approvals, status=status, run_id=run_id, limit=page_size)

    def approve(self, approval_id: str, *, rationale: str = "", **more: Any) -> models.Completion:
        """``complete(approval_id, decision="approve", …)``."""
        return self.complete(approval_id, decision="approve", rationale=rationale, **more)

    def reject(self, approval_id: str, *, rationale: str, **more: Any) -> models.Completion:
        """``complete(approval_id, decision="reject", …)``: the tool does not run."""
        return self.complete(approval_id, decision="reject", rationale=rationale, **more)

    def request_changes(self, approval_id: str, *, note: str, **more: Any) -> models.Completion:
        """``complete(approval_id, decision="request_changes", rationale=note)``: the model reads
        ``note`` as the call's result and may propose another call."""
        return self.complete(approval_id, decision="request_changes", rationale=note, **more)


class Reviewers(_Resource):
    register = blocking(operations.register_reviewer)
    me = blocking(operations.reviewer_me)
    update_me = blocking(operations.update_reviewer_me)
    page = blocking(operations.list_reviewers)

    def list(self, *, page_size: int | None = None) -> Iterator[models.Reviewer]:
        return self._every(operations.list_reviewers, limit=page_size)


class Rules(_Resource):
    page = blocking(operations.list_rules)
    get = blocking(operations.get_rule)
    create = blocking(operations.create_rule)
    update = blocking(operations.update_rule)
    delete = blocking(operations.delete_rule)

    def list(self, *, page_size: int | None = None) -> Iterator[models.ApprovalRule]:
        return self._every(operations.list_rules, limit=page_size)


class Schedules(_Resource):
    page = blocking(operations.list_schedules)
    get = blocking(operations.get_schedule)
    create = blocking(operations.create_schedule)
    update = blocking(operations.update_schedule)
    delete = blocking(operations.delete_schedule)

    def list(self, *, page_size: int | None = None) -> Iterator[models.Schedule]:
        return self._every(operations.list_schedules, limit=page_size)


class Grants(_Resource):
    page = blocking(operations.list_grants)
    create = blocking(operations.create_grant)
    revoke = blocking(operations.revoke_grant)

    def list(self, *, page_size: int | None = None) -> Iterator[models.Grant]:
        return self._every(operations.list_grants, limit=page_size)


class Catalog(_Resource):
    """The tools, agents and flows in service, and the MCP servers behind some tools."""

    tools_page = blocking(operations.list_tools)
    tool = blocking(operations.get_tool)
    agents_page = blocking(operations.list_agents)
    agent = blocking(operations.get_agent)
    flows_page = blocking(operations.list_flows)
    flow = blocking(operations.get_flow)
    mcp_servers = blocking(operations.list_mcp_servers)

    def tools(self) -> Iterator[models.Tool]:
        return self._every(operations.list_tools)

    def agents(self) -> Iterator[models.Agent]:
        return self._every(operations.list_agents)

    def flows(self) -> Iterator[models.Flow]:
        return self._every(operations.list_flows)


class Connections(_Resource):
    """Your connections to outside apps."""

    apps = blocking(operations.list_apps)
    list = blocking(operations.list_connections)
    get = blocking(operations.get_connection)
    connect = blocking(operations.connect_app)
    remove = blocking(operations.remove_connection)


class Audit(_Resource):
    page = blocking(operations.list_audit)
    heads = blocking(operations.audit_heads)

    def list(self, **filters: Any) -> Iterator[models.AuditEntry]:
        """Every entry that matches ``filters`` (``list_audit``'s: action, actor, surface…)."""
        return self._every(operations.list_audit, **filters)


class Client:
    """Kindgi's API. ``url`` and ``token`` default to ``KINDGI_URL`` and ``KINDGI_TOKEN``, then to
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
        self._transport = Transport(
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

    def close(self) -> None:
        self._transport.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
