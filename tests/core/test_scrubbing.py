"""One scrubbing step each way: a provider key typed into anything a person sends is scrubbed
before it is stored, an error that echoes a request echoes no secret, and no log line, access log
included, holds a secret or a decision link's token."""

import json

import httpx
import pytest
from django.db import connection
from django.test import Client

from approvals.actions.decisions import check_complete_approval
from approvals.links import issue_link
from approvals.models import Approval, Decision, Reviewer, Webhook, WebhookDelivery
from runs.actions import check_start_run
from runs.models import Schedule
from tests.api.conftest import client_for
from tests.factories import default_tenant, member, principal, reviewer
from tests.live_server import LiveServer, database_env

pytestmark = pytest.mark.django_db(transaction=True)
KEY = "planted-Qm7Zx2Lk9Rt4Vb8Np3Hd"


@pytest.fixture
def planted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return KEY


def test_a_key_typed_into_a_reviewers_name_reaches_no_one(planted):
    Webhook.objects.create(tenant=default_tenant(), url="http://127.0.0.1:9/hook", secret="s" * 20)
    rita = member("rita", tenant_admin=True)
    registered = client_for(rita).post(
        "/api/v1/reviewers/register", {"role": "standard", "displayName": f"Rita {KEY}"}, format="json"
    )
    assert registered.status_code == 200, registered.content
    assert Reviewer.objects.get(user=rita).display_name == "Rita [REDACTED]"
    assert KEY not in client_for(member("mo")).get("/api/v1/reviewers").text
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up"},
    )
    check_complete_approval(
        approval_id=Approval.objects.get(run=run).pk, acting_user=rita, decision="approve"
    )
    assert Decision.objects.get().reviewer_name == "Rita [REDACTED]"
    deliveries = json.dumps(list(WebhookDelivery.objects.values_list("payload", flat=True)))
    assert "approval.decided" in json.dumps(list(WebhookDelivery.objects.values_list("event", flat=True)))
    assert KEY not in deliveries


def test_a_key_in_a_schedules_name_and_input_is_never_stored(planted):
    tina = member("tina", tenant_admin=True)
    made = client_for(tina).post(
        "/api/v1/schedules",
        {
            "name": f"nightly {KEY}",
            "flowId": "my-pack.check-order",
            "input": {"orderId": KEY},
            "cron": "0 9 * * *",
        },
        format="json",
    )
    assert made.status_code == 201, made.content
    assert KEY not in made.text
    schedule = Schedule.objects.get()
    assert (schedule.name, schedule.input) == ("nightly [REDACTED]", {"orderId": "[REDACTED]"})


def test_a_key_typed_into_a_console_form_is_never_stored(planted):
    """The forms' middleware, on the console's rules page (the admin's forms pass it too)."""
    from approvals.models import ApprovalRule

    browser = Client()
    browser.force_login(member("tina", tenant_admin=True))
    saved = browser.post(
        "/console/rules/",
        {"name": f"refunds {KEY}", "gate": "deny", "tool_pattern": "my-pack.*", "reason": KEY, "days": "30"},
    )
    assert saved.status_code == 302, saved.content
    rule = ApprovalRule.objects.get()
    assert (rule.name, rule.reason) == ("refunds [REDACTED]", "[REDACTED]")


@pytest.mark.parametrize(
    "path",
    [
        f"/api/v1/flows/{KEY}",
        f"/api/v1/agents/sk-{KEY}",
        f"/api/v1/nothing/{KEY}",
        f"/api/v1/runs?status={KEY}",
    ],
)
def test_an_error_that_echoes_the_request_echoes_no_secret(planted, path):
    response = client_for(member("mo")).get(path)
    assert 400 <= response.status_code < 500
    assert set(response.json()) == {"error"}
    assert KEY not in response.text


def test_neither_a_key_nor_a_decision_links_token_reaches_the_logs(planted, settings):
    """The real web server as `kindgi serve` starts it: its access log and its own log lines."""
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up"},
    )
    token = issue_link(Approval.objects.get(run=run), reviewer("rita"), "approve")
    api_token = client_for(member("mo"))._credentials["HTTP_AUTHORIZATION"]
    with LiveServer(database_env(connection) | {"OPENAI_API_KEY": KEY}) as server:
        assert httpx.get(f"{server.url}/console/decide/{token}/").status_code == 200
        assert httpx.get(f"{server.url}/console/decide/{token}x/").status_code in (200, 404, 410)
        httpx.get(f"{server.url}/api/v1/flows/{KEY}", headers={"Authorization": api_token})
        httpx.get(f"{server.url}/nowhere/{KEY}")
        logs = server.access_log() + server.stderr()
    assert "/console/decide/[REDACTED]/" in logs
    assert token not in logs
    assert KEY not in logs


def test_a_key_a_form_spells_with_escapes_is_scrubbed_where_the_setting_is_saved(planted, client):
    """The admin's JSON field decodes "\\u0070lanted-…" only after the forms' middleware saw the
    post: the door that saves a setting scrubs it again."""
    from django.contrib.auth.models import Permission

    tina = member("tina", tenant_admin=True)
    tina.is_staff = True
    tina.save()
    tina.user_permissions.set(Permission.objects.filter(codename__endswith="schedule"))
    client.force_login(tina)
    escaped = "\\u0070" + KEY[1:]
    saved = client.post(
        "/admin/runs/schedule/add/",
        {
            "tenant": str(default_tenant().pk),
            "name": "nightly",
            "flow_key": "my-pack.check-order",
            "agent_key": "",
            "input": '{"orderId": "' + escaped + '"}',
            "cron": "0 9 * * *",
            "owner": str(tina.pk),
            "enabled": "on",
        },
    )
    assert saved.status_code == 302, saved.content
    assert Schedule.objects.get().input == {"orderId": "[REDACTED]"}


@pytest.mark.parametrize(
    "path",
    [
        "/api/v1/audit?action=%00",
        "/api/v1/runs?status=a%00b",
        "/console/runs/?status=%00",
        "/api/v1/tools/a%00b",
    ],
)
def test_a_query_with_a_nul_character_is_refused_not_an_error_of_the_server(path, client):
    tina = member("tina", tenant_admin=True)
    client.force_login(tina)
    response = client_for(tina).get(path) if path.startswith("/api/") else client.get(path)
    assert response.status_code == 400
    if path.startswith("/api/"):
        assert response.json()["error"]["code"] == "malformed_request"
