"""Every API body, flow input and agent input refuses a field it does not know, naming it, and a
refused request writes nothing: a misspelled dryRun must never run for real."""

import pytest

from approvals.models import Approval, ApprovalRule, ApprovalStatus, Decision, Reviewer
from packs.my_pack.order_book import ORDER_BOOK
from runs.models import JournalEntry, Run
from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = {"orderId": "ord_1001", "text": "Customer called"}


def error_of(response, status=400):
    assert response.status_code == status, response.content
    return response.json()["error"]


def test_a_misspelled_dry_run_is_refused_and_nothing_runs(api):
    error = error_of(
        api.post(
            "/api/v1/runs", {"flowId": "my-pack.note-order", "input": NOTE, "dry_run": True}, format="json"
        )
    )
    assert error["code"] == "invalid_input"
    assert error["details"]["errors"] == [
        "/dry_run: unknown field (did you mean dryRun? the fields are: "
        "agentId, connections, conversationId, dryRun, flowId, input, readOnly, version)"
    ]
    assert error["details"]["fields"] == {"dry_run": error["details"]["errors"][0].removeprefix("/dry_run: ")}
    assert (Run.objects.count(), JournalEntry.objects.count()) == (0, 0)
    assert ORDER_BOOK.get("ord_1001").notes == []


def test_every_unknown_field_is_named(api):
    error = error_of(
        api.post(
            "/api/v1/runs",
            {"flowId": "my-pack.check-order", "input": {}, "colour": 1, "size": 2},
            format="json",
        )
    )
    assert sorted(error["details"]["fields"]) == ["colour", "size"]


def test_an_unknown_field_in_a_flows_input_is_refused(api):
    error = error_of(
        api.post(
            "/api/v1/runs", {"flowId": "my-pack.note-order", "input": NOTE | {"urgent": True}}, format="json"
        )
    )
    assert error["details"]["fields"] == {"input/urgent": "unknown field (the fields are: orderId, text)"}
    assert not Run.objects.exists()
    assert ORDER_BOOK.get("ord_1001").notes == []


def test_an_unknown_field_in_an_agents_input_is_refused(api):
    body = {"agentId": "acme-ops.status-agent", "input": {"userMessage": "Up.", "priority": "high"}}
    error = error_of(api.post("/api/v1/runs", body, format="json"))
    assert list(error["details"]["fields"]) == ["input/priority"]
    assert not Run.objects.exists()


def test_a_decision_with_an_unknown_field_is_refused_and_the_approval_stays_pending(api):
    api.post(
        "/api/v1/runs", {"agentId": "acme-ops.status-agent", "input": {"userMessage": "Up."}}, format="json"
    )
    approval = Approval.objects.get()
    response = api.post(
        f"/api/v1/approvals/{approval.pk}/complete",
        {"decision": "approve", "rationel": "typo"},
        format="json",
    )
    assert list(error_of(response)["details"]["fields"]) == ["rationel"]
    approval.refresh_from_db()
    assert approval.status == ApprovalStatus.PENDING
    assert not Decision.objects.exists()


def test_a_reviewer_registration_with_an_unknown_field_is_refused(db):
    from tests.factories import member

    api = client_for(member("newbie"))
    response = api.post(
        "/api/v1/reviewers/register", {"role": "standard", "displayName": "New", "team": "ops"}, format="json"
    )
    assert list(error_of(response)["details"]["fields"]) == ["team"]
    assert not Reviewer.objects.exists()


def test_a_rule_with_an_unknown_field_is_refused(db):
    from tests.factories import member

    admin_api = client_for(member("tina", tenant_admin=True))
    body = {"name": "r", "gate": "deny", "tool": "acme-ops.*"}
    response = admin_api.post("/api/v1/approval-rules", body, format="json")
    assert "did you mean" not in error_of(response)["details"]["fields"]["tool"]
    assert not ApprovalRule.objects.exists()


def test_read_only_fields_are_not_accepted_either(db):
    from tests.factories import member

    admin_api = client_for(member("tina", tenant_admin=True))
    response = admin_api.post(
        "/api/v1/approval-rules", {"name": "r", "gate": "deny", "createdAt": "now"}, format="json"
    )
    assert list(error_of(response)["details"]["fields"]) == ["createdAt"]
    assert not ApprovalRule.objects.exists()
