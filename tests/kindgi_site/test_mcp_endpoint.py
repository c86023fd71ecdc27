"""Kindgi's ``/mcp`` endpoint, driven by the ``mcp`` SDK's own client against a real daphne
process: list the flows and agents, run one that completes, run one that waits for a person,
decide it, and read the run's output."""

import asyncio

import httpx
import httpx2
import pytest
from django.db import connection
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from approvals.actions.decisions import check_complete_approval
from approvals.models import Approval
from runs.models import Run, RunStatus
from tenants.tokens import do_create_token
from tests.factories import member, reviewer
from tests.live_server import LiveServer, database_env

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), LiveServer(database_env(connection)) as live:
        yield live


def over_mcp(server, token: str, use):
    """``use(client)`` inside a session with ``/mcp``, as an MCP client application would open one."""

    async def session():
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=60)
        async with Client(streamable_http_client(f"{server.url}/mcp", http_client=http)) as client:
            return await use(client)

    return asyncio.run(session())


@pytest.fixture
def token():
    _, plain = do_create_token(user=member("mona"))
    return plain


def test_the_flows_and_agents_are_tools_read_only_only_when_all_they_reach_only_reads(server, token):
    async def listing(client):
        return (await client.list_tools()).tools

    tools = {tool.name: tool for tool in over_mcp(server, token, listing)}
    assert {
        "my-pack.check-order",
        "my-pack.note-order",
        "acme-ops.status-agent",
        "acme-ops.status-flow",
    } <= set(tools)
    assert tools["my-pack.check-order"].annotations.read_only_hint is True
    assert tools["my-pack.note-order"].annotations.read_only_hint is False
    assert tools["acme-ops.status-agent"].annotations.read_only_hint is False
    assert tools["my-pack.check-order"].input_schema["required"] == ["orderId"]
    assert tools["acme-ops.status-agent"].input_schema["required"] == ["userMessage"]


def test_a_flow_that_completes_answers_with_its_output(server, token):
    async def check(client):
        return await client.call_tool("my-pack.check-order", {"orderId": "ord_1001"})

    result = over_mcp(server, token, check)
    assert result.is_error is False
    assert result.structured_content["status"] == "completed"
    run = Run.objects.get(pk=result.structured_content["runId"])
    assert run.started_by.username == "mona"
    assert result.structured_content["output"] == run.output
    assert run.output["status"]


def test_a_run_that_waits_answers_with_its_approval_then_goes_on_once_decided(server, token):
    async def post(client):
        return await client.call_tool("acme-ops.status-agent", {"userMessage": "We are back up."})

    result = over_mcp(server, token, post)
    assert result.is_error is False
    data = result.structured_content
    assert data["status"] == "suspended"
    (waiting,) = data["waitingFor"]
    approval = Approval.objects.get(pk=waiting["approvalId"])
    assert waiting["toolId"] == "acme-ops.post-update"
    assert str(approval.run_id) == data["runId"]
    assert f"kindgi runs get {data['runId']}" in data["message"]

    check_complete_approval(approval_id=approval.pk, acting_user=reviewer("rita"), decision="approve")
    run = Run.objects.get(pk=data["runId"])
    assert run.status == RunStatus.COMPLETED
    # The output an MCP client reads afterwards, as `kindgi runs get` does.
    with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}) as api:
        got = api.get(f"/api/v1/runs/{run.pk}").json()
    assert got["status"] == "completed"
    assert got["output"]["reply"]


def test_bad_input_is_an_error_result_and_starts_nothing(server, token):
    async def wrong(client):
        return await client.call_tool("my-pack.check-order", {"orderId": "ord_1001", "dryRn": True})

    result = over_mcp(server, token, wrong)
    assert result.is_error is True
    assert "dryRn" in result.structured_content["error"]
    assert not Run.objects.exists()


def test_a_nul_in_a_call_is_an_error_result_and_starts_nothing(server, token):
    async def with_a_nul(client):
        return await client.call_tool("my-pack.check-order", {"orderId": "ord_\x001001"})

    result = over_mcp(server, token, with_a_nul)
    assert result.is_error is True
    assert "NUL" in result.content[0].text
    assert not Run.objects.exists()


KEY = "sk-proj-Ab3dEf7hIj" + "Kl9Mn2Op4Qr6St8Uv0Wx"


@pytest.fixture(scope="module")
def keyed_server(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), LiveServer(database_env(connection) | {"OPENAI_API_KEY": KEY}) as live:
        yield live


def test_what_mcp_echoes_of_a_call_holds_no_provider_key(keyed_server, token):
    headers = {
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    body = {"jsonrpc": "2.0", "id": KEY, "method": "tools/call", "params": {"name": KEY, "arguments": {}}}
    response = httpx.post(f"{keyed_server.url}/mcp", json=body, headers=headers)
    assert response.status_code == 200, response.text
    assert KEY not in response.text
    assert "[REDACTED]" in response.text
    assert int(response.headers["content-length"]) == len(response.content)
    assert response.json()["jsonrpc"] == "2.0"


@pytest.mark.parametrize(
    ("authorization", "status"),
    [(None, 401), ("Bearer kgi_nope_nope", 401), ("Basic abc", 401)],
    ids=["no token", "an unknown token", "not a bearer"],
)
def test_no_token_no_mcp(server, authorization, status):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if authorization:
        headers["Authorization"] = authorization
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    response = httpx.post(f"{server.url}/mcp", json=body, headers=headers)
    assert response.status_code == status
    assert response.json()["error"]["code"] == "unauthenticated"


@pytest.fixture(scope="module")
def queueing_server(django_db_setup, django_db_blocker):
    """Runs are queued for workers, and none is running: a call's time runs out first."""
    environment = database_env(connection) | {"KINDGI_TASKS": "db", "KINDGI_MCP_CALL_WAIT_SECONDS": "1"}
    with django_db_blocker.unblock(), LiveServer(environment) as live:
        yield live


def test_a_run_that_has_not_ended_when_the_time_is_up_says_where_it_stands(queueing_server, token):
    async def check(client):
        return await client.call_tool("my-pack.check-order", {"orderId": "ord_1001"})

    result = over_mcp(queueing_server, token, check)
    assert result.is_error is False
    data = result.structured_content
    assert data["status"] == "queued"
    assert data["waitingFor"] == []
    assert f"kindgi runs get {data['runId']}" in data["message"]
    assert Run.objects.get(pk=data["runId"]).status == RunStatus.QUEUED


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "PATCH"])
def test_only_post_is_served_every_other_method_is_a_405_that_says_so(server, token, method):
    """Stateless, /mcp offers no event stream to a GET and no session to DELETE: it answers at
    once (a GET used to open a stream that never sent anything), as the API answers a 405."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    response = httpx.request(method, f"{server.url}/mcp", headers=headers, timeout=10)
    assert response.status_code == 405
    assert response.headers["Allow"] == "POST"
    assert response.headers["Content-Type"] == "application/json"
    error = response.json()["error"]
    assert error["code"] == "method_not_allowed"
    assert method in error["message"]
    assert error["details"] == {}


def test_a_get_without_a_token_is_still_a_401(server):
    response = httpx.get(f"{server.url}/mcp", headers={"Accept": "text/event-stream"}, timeout=10)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthenticated"
