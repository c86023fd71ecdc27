"""What the catalog API, the CLI and /readyz say of MCP servers and their tools, per tenant."""

import pytest
from django.db import connection
from rest_framework.test import APIClient

from approvals.actions.rules import check_save_rule
from runs.models import RunStatus
from tenants.tokens import do_create_token
from tests.factories import default_tenant, member, other_tenant, superuser
from tests.live_server import LiveServer, database_env
from tests.mcp.conftest import stdio_server
from tests.pack_fixtures.probes import SCRIPT
from tests.runs.helpers import answer, calls, start
from tools.mcp.catalog import do_refresh_mcp_servers
from tools.models import McpServer

pytestmark = pytest.mark.django_db(transaction=True)


def api_for(user) -> APIClient:
    _, token = do_create_token(user=user)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api


@pytest.fixture
def private_notes(notes, tmp_path):
    """Beside the site's `notes`: `private-notes`, the default tenant's own, and `silent`, another
    of its servers that does not answer."""
    config = stdio_server("private-notes", tmp_path / "private.log")
    McpServer.objects.create(
        name="private-notes",
        tenant=default_tenant(),
        command=config["command"],
        env=config["env"],
        command_approved_by=superuser(),
    )
    McpServer.objects.create(
        name="silent", tenant=default_tenant(), command=["/no/such/server"], command_approved_by=superuser()
    )
    do_refresh_mcp_servers(["private-notes", "silent"], timeout=5)


def tool_ids(api) -> set[str]:
    return {tool["id"] for tool in api.get("/api/v1/tools", {"limit": 200}).json()["items"]}


def test_a_tenants_server_is_in_its_catalog_only(private_notes):
    ours, theirs = api_for(member("ours")), api_for(member("theirs", tenant=other_tenant()))
    assert {"notes.read-note", "private-notes.read-note"} <= tool_ids(ours)
    assert "notes.read-note" in tool_ids(theirs)
    assert not any(key.startswith("private-notes.") for key in tool_ids(theirs))
    assert theirs.get("/api/v1/tools/private-notes.read-note").status_code == 404

    tool = ours.get("/api/v1/tools/private-notes.read-note").json()
    assert tool["origin"] == "mcp"
    assert tool["mcpServer"] == "private-notes"
    assert tool["readOnly"] is False
    assert tool["mutating"] is True
    assert tool["claims"] == {"title": "Read a note", "readOnlyHint": True}
    assert ours.get("/api/v1/tools/my-pack.lookup-order").json()["mcpServer"] is None


def test_the_servers_list_says_which_answer(private_notes):
    servers = {s["name"]: s for s in api_for(member("ours")).get("/api/v1/mcp-servers").json()["items"]}
    assert servers["notes"]["scope"] == "site"
    assert servers["notes"]["answering"] is True
    assert servers["notes"]["tools"] == 6
    assert servers["private-notes"]["scope"] == "tenant"
    assert servers["silent"]["answering"] is False
    assert "/no/such/server" in servers["silent"]["lastError"]
    theirs = api_for(member("theirs", tenant=other_tenant())).get("/api/v1/mcp-servers").json()["items"]
    assert [s["name"] for s in theirs] == ["notes"]


def test_readyz_counts_the_servers_without_naming_a_tenants(private_notes, client):
    body = client.get("/readyz").json()
    assert body["status"] == "ok"
    assert body["mcpServers"] == {"answering": 2, "notAnswering": 1, "siteServersNotAnswering": []}


def test_a_tenant_rule_on_the_servers_resource_denies_its_tools(notes):
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "no notes",
            "resource_pattern": "mcp:notes",
            "gate": "deny",
            "reason": "Read-only week.",
        },
        acting_user=None,
        surface="system",
    )
    SCRIPT.replies[:] = [calls(("c1", "notes.read-note", {"name": "welcome"})), answer()]
    run = start("mcp-probe.reader")
    assert run.status == RunStatus.COMPLETED
    assert not run.journal.filter(kind="tool.called").exists()
    assert run.journal.get(kind="tool.refused").payload["gate"]["ruleName"] == "no notes"


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), LiveServer(database_env(connection)) as live:
        yield live


def test_kindgi_tools_list_warns_of_a_server_that_does_not_answer(server, monkeypatch, tmp_path, capsys):
    from kindgi.cli import main

    McpServer.objects.create(
        name="silent", tenant=default_tenant(), command=["/no/such/server"], command_approved_by=superuser()
    )
    do_refresh_mcp_servers(["silent"], timeout=5)
    _, token = do_create_token(user=member("ada"))
    monkeypatch.setenv("KINDGI_URL", server.url)
    monkeypatch.setenv("KINDGI_TOKEN", token)
    monkeypatch.setenv("KINDGI_CONFIG", str(tmp_path / "config.json"))
    assert main(["tools", "list"]) == 0
    out, err = capsys.readouterr()
    assert '"items"' in out
    assert "warning: MCP server silent is not answering" in err
    assert "/no/such/server" in err
