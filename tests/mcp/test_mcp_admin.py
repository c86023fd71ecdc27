"""A tenant's MCP servers in the admin: checked, listed on save, scoped to the tenant, never deleted."""

import json
import sys

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse

from tests.factories import default_tenant, member, other_tenant
from tests.mcp.conftest import NOTES_SERVER, PACKS
from tools.mcp.client import POOL
from tools.models import McpServer, Tool

pytestmark = pytest.mark.django_db(transaction=True)


def form(**fields) -> dict:
    return {
        "name": "private-notes",
        "tenant": default_tenant().pk,
        "transport": "stdio",
        "command": json.dumps([sys.executable, str(NOTES_SERVER)]),
        "env": "{}",
        "url": "",
        "headers": "{}",
        "enabled": "on",
    } | fields


@pytest.fixture(autouse=True)
def _packs(settings):
    settings.KINDGI_PACKS = PACKS
    yield
    POOL.close()


def test_saving_a_server_lists_its_tools_and_says_so(admin_client):
    response = admin_client.post(reverse("admin:tools_mcpserver_add"), form(), follow=True)
    assert "MCP server private-notes: tools 6 created" in response.text
    server = McpServer.objects.get(name="private-notes")
    assert server.tenant == default_tenant()
    assert server.answers
    assert Tool.objects.filter(mcp_server=server, retired_at__isnull=True).count() == 6


@pytest.mark.parametrize(
    ("fields", "says"),
    [
        ({"name": "my-pack"}, "is a pack&#x27;s"),
        ({"name": "Private_Notes"}, "must be lowercase letters"),
        ({"tenant": ""}, "A server made in the admin belongs to a tenant."),
        ({"url": "http://127.0.0.1:9/mcp"}, "leave url and headers empty"),
        ({"transport": "http", "url": "http://127.0.0.1:9/mcp"}, "leave command and env empty"),
    ],
    ids=["a pack's name", "not a name", "no tenant", "a url for stdio", "a command for http"],
)
def test_a_wrong_server_is_refused_naming_why_and_nothing_is_saved(admin_client, fields, says):
    response = admin_client.post(reverse("admin:tools_mcpserver_add"), form(**fields))
    assert response.status_code == 200
    assert says in response.text
    assert not McpServer.objects.exists()


def test_staff_see_and_make_only_their_tenants_servers_and_delete_none(client):
    McpServer.objects.create(name="theirs", tenant=other_tenant(), command=["true"])
    mine = McpServer.objects.create(name="mine", tenant=default_tenant(), command=["true"])
    staff = member("sid", tenant_admin=True)
    staff.is_staff = True
    staff.save()
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="mcpserver"))
    client.force_login(staff)
    listing = client.get(reverse("admin:tools_mcpserver_changelist")).text
    assert "mine" in listing
    assert "theirs" not in listing
    assert client.get(reverse("admin:tools_mcpserver_delete", args=[mine.pk])).status_code == 403
    refused = client.post(reverse("admin:tools_mcpserver_add"), form(name="sneaky", tenant=other_tenant().pk))
    assert "Select a valid choice" in refused.text
    assert not McpServer.objects.filter(name="sneaky").exists()


def test_staff_who_are_not_tenant_admins_change_no_server(client):
    mine = McpServer.objects.create(name="mine", tenant=default_tenant(), command=["true"])
    staff = member("sam")
    staff.is_staff = True
    staff.save()
    staff.user_permissions.set(Permission.objects.filter(codename__endswith="mcpserver"))
    client.force_login(staff)
    assert "mine" in client.get(reverse("admin:tools_mcpserver_changelist")).text
    assert client.get(reverse("admin:tools_mcpserver_add")).status_code == 403
    change = reverse("admin:tools_mcpserver_change", args=[mine.pk])
    changed = client.post(change, form(name="mine", enabled=""))
    assert changed.status_code == 403
    mine.refresh_from_db()
    assert mine.enabled
