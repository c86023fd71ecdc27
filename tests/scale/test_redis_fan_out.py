"""Two web processes sharing Redis: a run decided on one is seen live by a client of the other."""

import json

import httpx
import pytest
from django.db import connection
from websockets.sync.client import connect

from approvals.models import Approval
from tenants.tokens import do_create_token
from tests.factories import reviewer
from tests.live_server import LiveServer, database_env

pytestmark = pytest.mark.django_db(transaction=True)
REDIS = {"REDIS_URL": "redis://127.0.0.1:6379/3"}


def test_events_cross_web_processes_through_redis(redis_server):
    ada = reviewer("ada")
    token = do_create_token(user=ada)[1]
    headers = {"Authorization": f"Bearer {token}"}
    environment = database_env(connection) | REDIS
    with LiveServer(environment) as first, LiveServer(environment) as second:
        run = httpx.post(
            f"{first.url}/api/v1/runs",
            json={"agentId": "acme-ops.status-agent", "input": {"userMessage": "Up."}},
            headers=headers,
            timeout=30,
        ).json()
        assert run["status"] == "suspended"
        socket_url = first.url.replace("http://", "ws://") + f"/ws/runs/{run['id']}/"
        with connect(socket_url, additional_headers=headers, origin=first.url, open_timeout=10) as socket:
            while json.loads(socket.recv(timeout=10))["type"] != "replay.done":
                pass
            approval = Approval.objects.get(run_id=run["id"])
            decided = httpx.post(
                f"{second.url}/api/v1/approvals/{approval.pk}/complete",
                json={"decision": "approve"},
                headers=headers,
                timeout=30,
            )
            assert decided.status_code == 200
            kinds = []
            while "run.completed" not in kinds:
                kinds.append(json.loads(socket.recv(timeout=10))["entry"]["kind"])
        assert kinds[0] == "wait.resumed"
