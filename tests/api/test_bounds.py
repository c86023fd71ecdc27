"""Every number a person types is bounded, and the error names the bound: nothing they can type
gives a 500, or saves a rule that breaks every run it matches."""

import pytest

from approvals.models import ApprovalRule
from core.bounds import SECONDS_MAX
from runs.models import Schedule
from tests.api.conftest import client_for
from tests.factories import member

pytestmark = pytest.mark.django_db(transaction=True)
RULE = {"name": "bounded", "toolPattern": "acme-ops.*", "gate": "always_ask"}
HUGE = "9" * 5000


@pytest.fixture
def admin_api():
    return client_for(member("tina", tenant_admin=True))


def refused(response, field: str) -> str:
    assert response.status_code == 400, response.content
    body = response.json()["error"]
    assert field in body["details"]["fields"], body
    return body["details"]["fields"][field]


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"condition": f"/amountCents > {HUGE}"}, "condition", "no more than 500 characters"),
        ({"ttlSeconds": 10**30}, "ttlSeconds", f"from 1 to {SECONDS_MAX}"),
        ({"ttlSeconds": 1_000_000_000_000}, "ttlSeconds", f"from 1 to {SECONDS_MAX}"),
        ({"ttlSeconds": True}, "ttlSeconds", "whole number"),
        (
            {"escalation": [{"afterSeconds": 10**15, "expire": True}]},
            "escalation",
            f"from 1 to {SECONDS_MAX}",
        ),
        ({"requiredApprovals": 10**20}, "requiredApprovals", "from 1 to 5"),
    ],
)
def test_a_rule_with_a_number_out_of_bounds_is_refused_naming_it(admin_api, changes, field, says):
    assert says in refused(admin_api.post("/api/v1/approval-rules", RULE | changes, format="json"), field)
    assert not ApprovalRule.objects.exists()


def test_an_override_with_a_huge_number_in_its_condition_is_refused(admin_api):
    response = admin_api.put(
        "/api/v1/agents/acme-ops.status-agent/overrides/acme-ops.post-update",
        {"gate": "always_ask", "condition": f"/message == {HUGE}"},
        format="json",
    )
    assert "too long" in refused(response, "condition")


def test_a_schedule_on_a_day_that_never_comes_is_refused(admin_api):
    response = admin_api.post(
        "/api/v1/schedules",
        {
            "name": "never",
            "flowId": "my-pack.check-order",
            "input": {"orderId": "ord_1"},
            "cron": "0 0 30 2 *",
        },
        format="json",
    )
    assert "never run" in refused(response, "cron")
    assert not Schedule.objects.exists()


@pytest.mark.parametrize("cron", ["0 0 31 2-2 *", "0 0 31 APR-APR *", "0 0 30-30 2 *"])
def test_a_range_of_one_day_that_never_comes_is_refused_too(admin_api, cron):
    """croniter reads a range of one value (2-2) as any value (*): Kindgi reads it as written."""
    response = admin_api.post(
        "/api/v1/schedules",
        {"name": "never", "flowId": "my-pack.check-order", "input": {"orderId": "ord_1"}, "cron": cron},
        format="json",
    )
    assert "never run" in refused(response, "cron")
    assert not Schedule.objects.exists()


def test_a_range_of_one_minute_runs_at_that_minute_not_every_minute(admin_api):
    response = admin_api.post(
        "/api/v1/schedules",
        {
            "name": "at 09:05",
            "flowId": "my-pack.check-order",
            "input": {"orderId": "ord_1"},
            "cron": "5-5 9-9 * * *",
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["nextRunAt"].endswith("T09:05:00Z")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999999", "[NaN]"])
def test_a_condition_on_a_number_json_has_not_is_refused(admin_api, value):
    response = admin_api.post(
        "/api/v1/approval-rules",
        {"name": "odd", "gate": "deny", "condition": f"/amountCents > {value}"},
        format="json",
    )
    refused(response, "condition")
    assert not ApprovalRule.objects.exists()


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        (
            "/api/v1/approval-rules",
            {"name": "long", "gate": "deny", "condition": "/a == " + "9" * 4000},
            "condition",
        ),
        ("/api/v1/approval-rules", {"name": "long", "gate": "deny", "reason": "r" * 501}, "reason"),
        ("/api/v1/approval-rules", {"name": "long", "gate": "deny", "toolPattern": "t" * 201}, "toolPattern"),
        (
            "/api/v1/schedules",
            {
                "name": "n" * 201,
                "flowId": "my-pack.check-order",
                "input": {"orderId": "ord_1"},
                "cron": "0 9 * * *",
            },
            "name",
        ),
        ("/api/v1/mailboxes", {"address": "a" * 250 + "@x.test", "owner": "ada"}, "address"),
    ],
)
def test_text_longer_than_its_column_holds_is_refused_naming_it(admin_api, path, body, field):
    """On PostgreSQL a longer text would be the database's error, a 500."""
    assert "no more than" in refused(admin_api.post(path, body, format="json"), field)


@pytest.mark.parametrize("after", [str(10**30), "-1", "1e3", "٣"])
def test_a_journal_position_out_of_bounds_is_refused(admin_api, after):
    run = admin_api.post(
        "/api/v1/runs", {"flowId": "my-pack.check-order", "input": {"orderId": "ord_1001"}}, format="json"
    )
    response = admin_api.get(f"/api/v1/runs/{run.json()['id']}/journal", {"after": after})
    assert "whole number from 0 to" in refused(response, "after")


def test_a_mailbox_size_beyond_the_sites_ceiling_is_refused(admin_api):
    response = admin_api.post(
        "/api/v1/mailboxes",
        {
            "address": "help@acme.test",
            "owner": "tina",
            "agentId": "kindgi-mail.responder",
            "sizeLimit": 10**40,
        },
        format="json",
    )
    assert "whole number from 1 to" in refused(response, "sizeLimit")
