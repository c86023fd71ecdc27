"""The runs' and the approvals' sockets handle each event without a hop to Channels' one
thread-sensitive thread to close stale connections (their database calls close them)."""

from unittest import mock

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator

from kindgi_site.asgi import application
from runs.actions import check_start_run
from tenants.tokens import do_create_token
from tests.factories import default_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def test_events_reach_the_sockets_without_a_hop_each(monkeypatch):
    token = do_create_token(user=reviewer("ada"))[1]
    headers = [(b"origin", b"http://127.0.0.1"), (b"authorization", f"Bearer {token}".encode())]
    hops = mock.AsyncMock()
    monkeypatch.setattr("channels.consumer.aclose_old_connections", hops)

    async def scenario():
        approvals = WebsocketCommunicator(application, "/ws/approvals/", headers=headers)
        assert (await approvals.connect())[0]
        hops.reset_mock()  # what connecting did is not an event
        run = await sync_to_async(
            lambda: check_start_run(
                tenant=default_tenant(),
                principal=principal(default_tenant()),
                agent_id="acme-ops.status-agent",
                input={"userMessage": "Up."},
            )
        )()
        assert (await approvals.receive_json_from(timeout=5))["type"] == "approval.created"
        entries = WebsocketCommunicator(application, f"/ws/runs/{run.pk}/", headers=headers)
        assert (await entries.connect())[0]
        replayed = await entries.receive_json_from(timeout=5)
        assert replayed["runId"] == str(run.pk)
        await approvals.disconnect()
        await entries.disconnect()

    async_to_sync(scenario)()
    hops.assert_not_called()
