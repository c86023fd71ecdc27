import pytest

from approvals.models import ApprovalRule
from tests.factories import member, other_tenant

from .conftest import client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_api():
    return client_for(member("bea", tenant_admin=True))


RULE = {
    "name": "big refunds",
    "toolPattern": "shop.*",
    "condition": "/amountCents > 10000",
    "gate": "always_ask",
    "requiredRole": "senior",
    "ttlSeconds": 3600,
}


def test_a_tenant_admin_manages_rules(admin_api):
    created = admin_api.post("/api/v1/approval-rules", RULE | {"reviewers": ["bea"]}, format="json")
    assert created.status_code == 201
    rule = created.json()
    assert {k: rule[k] for k in RULE} == RULE
    assert rule["reviewers"] == ["bea"]
    assert (rule["agentPattern"], rule["effectKind"], rule["enabled"]) == ("*", "", True)
    assert ApprovalRule.objects.get().tenant.slug == "acme"
    assert (
        admin_api.patch(f"/api/v1/approval-rules/{rule['id']}", {"enabled": False}, format="json").json()[
            "enabled"
        ]
        is False
    )
    assert [r["name"] for r in admin_api.get("/api/v1/approval-rules").json()["items"]] == ["big refunds"]
    assert admin_api.delete(f"/api/v1/approval-rules/{rule['id']}").status_code == 204
    assert not ApprovalRule.objects.exists()


def test_bad_rules_name_each_field(admin_api):
    response = admin_api.post(
        "/api/v1/approval-rules",
        RULE
        | {"condition": "amount > 1", "effectKind": "mutates", "gate": "sometimes", "reviewers": ["nobody"]},
        format="json",
    )
    assert response.status_code == 400
    errors = response.json()["error"]["details"]["errors"]
    assert any(line.startswith("/gate: ") for line in errors)
    assert any(line.startswith("/reviewers: ") for line in errors)
    second = admin_api.post(
        "/api/v1/approval-rules", RULE | {"condition": "amount > 1", "effectKind": "mutates"}, format="json"
    )
    errors = second.json()["error"]["details"]["errors"]
    assert any(line.startswith("/condition: 'amount > 1' is not a condition") for line in errors)
    assert any(line.startswith("/effectKind: not one of") for line in errors)
    stranger = member("eve", tenant=other_tenant())
    third = admin_api.post("/api/v1/approval-rules", RULE | {"reviewers": [stranger.username]}, format="json")
    assert third.json()["error"]["details"]["errors"] == ["/reviewers: not members of Acme: eve"]
    assert not ApprovalRule.objects.exists()


def test_only_tenant_admins_and_only_their_tenants_rules(api, admin_api):
    refused = api.get("/api/v1/approval-rules")
    assert (refused.status_code, refused.json()["error"]["message"]) == (
        403,
        "only a tenant admin may do this",
    )
    other = ApprovalRule.objects.create(tenant=other_tenant(), name="theirs", gate="deny")
    assert admin_api.get(f"/api/v1/approval-rules/{other.pk}").status_code == 404
    assert admin_api.delete(f"/api/v1/approval-rules/{other.pk}").status_code == 404
    assert ApprovalRule.objects.filter(pk=other.pk).exists()


def test_a_rule_that_applies_after_outside_data_was_read(admin_api):
    created = admin_api.post(
        "/api/v1/approval-rules",
        RULE | {"after": {"outsideData": True, "scope": "conversation"}},
        format="json",
    )
    assert created.status_code == 201, created.json()
    assert created.json()["after"] == {"outsideData": True, "scope": "conversation"}
    plain = admin_api.post("/api/v1/approval-rules", RULE | {"name": "plain"}, format="json").json()
    assert plain["after"] is None
    changed = admin_api.patch(
        f"/api/v1/approval-rules/{plain['id']}", {"after": {"effect": "network"}}, format="json"
    )
    assert changed.json()["after"] == {"effect": "network", "scope": "run"}

    bad = admin_api.post(
        "/api/v1/approval-rules",
        RULE | {"name": "bad", "after": {"outsideData": True, "when": 1}},
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["errors"] == [
        "/after: when: not known (one of toolPattern, effect, outsideData, and scope)"
    ]
    assert ApprovalRule.objects.count() == 2


def test_a_rule_with_a_budget(admin_api):
    budget = {"scope": "run", "sumOf": "/amountCents", "maxSum": 100000}
    created = admin_api.post(
        "/api/v1/approval-rules", RULE | {"gate": "never_ask", "budget": budget}, format="json"
    )
    assert created.status_code == 201, created.json()
    assert created.json()["budget"] == budget | {"overBudget": "always_ask"}
    denied = admin_api.post(
        "/api/v1/approval-rules", RULE | {"name": "d", "gate": "deny", "budget": budget}, format="json"
    )
    assert denied.status_code == 400
    assert denied.json()["error"]["details"]["errors"] == [
        "/budget: a deny rule refuses every call it matches: a budget would change nothing"
    ]
    assert ApprovalRule.objects.count() == 1
