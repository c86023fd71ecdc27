"""/ws/approvals/: a tenant's approval events, live, to its members only."""

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth import get_user_model

from approvals.actions.decisions import check_complete_approval
from kindgi_site.asgi import application
from runs.actions import check_start_run, do_cancel_run
from tenants.tokens import do_create_token
from tests.factories import default_tenant, member, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def socket(token=None, query=""):
    headers = [(b"origin", b"http://127.0.0.1")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return WebsocketCommunicator(application, f"/ws/approvals/{query}", headers=headers)


def start(tenant=None):
    return check_start_run(
        tenant=tenant or default_tenant(),
        principal=principal(tenant or default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )


def test_created_decided_and_cancelled_reach_the_tenant_in_order():
    ada = reviewer("ada")
    token = do_create_token(user=ada)[1]

    async def scenario():
        client = socket(token)
        connected, _ = await client.connect()
        assert connected
        run = await sync_to_async(start)()
        created = await client.receive_json_from(timeout=5)
        assert created["type"] == "approval.created"
        assert created["approval"]["status"] == "pending"
        approval_id = created["approval"]["id"]
        await sync_to_async(check_complete_approval)(
            approval_id=approval_id, acting_user=ada, decision="approve"
        )
        decided = await client.receive_json_from(timeout=5)
        assert (decided["type"], decided["approval"]["status"], decided["decision"]["reviewer"]) == (
            "approval.decided",
            "approved",
            "Ada",
        )
        other = await sync_to_async(start)()
        assert (await client.receive_json_from(timeout=5))["type"] == "approval.created"
        await sync_to_async(do_cancel_run)(other.pk)
        cancelled = await client.receive_json_from(timeout=5)
        assert (cancelled["type"], cancelled["approval"]["status"]) == ("approval.cancelled", "cancelled")
        assert run.pk != other.pk
        await client.disconnect()

    async_to_sync(scenario)()


def test_another_tenants_events_never_arrive():
    token = do_create_token(user=member("ada"))[1]

    async def scenario():
        client = socket(token)
        await client.connect()
        await sync_to_async(lambda: start(other_tenant()))()
        assert await client.receive_nothing(timeout=0.5)
        await client.disconnect()

    async_to_sync(scenario)()


def test_the_console_gets_a_fragment_that_refreshes_its_queue():
    token = do_create_token(user=member("ada"))[1]

    async def scenario():
        client = socket(token, "?format=html")
        await client.connect()
        await sync_to_async(start)()
        fragment = await client.receive_from(timeout=5)
        assert 'id="queue-refresh"' in fragment
        assert 'hx-get="/console/queue/"' in fragment
        await client.disconnect()

    async_to_sync(scenario)()


@pytest.mark.parametrize(("who", "code"), [("anonymous", 4401), ("wrong token", 4401), ("no tenant", 4403)])
def test_who_belongs_to_no_tenant_is_told_why_with_a_close_code(who, code):
    token = {
        "anonymous": None,
        "wrong token": "kgi_deadbeef_nope",
        "no tenant": do_create_token(user=get_user_model().objects.create_user("loner"))[1],
    }[who]

    async def scenario():
        client = socket(token)
        connected, _ = await client.connect()
        assert connected
        assert await client.receive_output(timeout=5) == {"type": "websocket.close", "code": code}

    async_to_sync(scenario)()
