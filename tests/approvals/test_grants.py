"""Standing grants: a reviewer allows calls like one they approve, for a while and up to a
number; the gate step lets covered calls run, within the grant's limits and the granter's own
rights, and counts each use."""

import threading

import pytest
from django.db import connections
from django.test import override_settings
from rest_framework.test import APIClient

from approvals.actions.grants import check_create_grant
from approvals.actions.rules import check_save_rule
from approvals.exceptions import ApprovalInputError
from approvals.models import Approval, Grant, GrantUse
from audit.models import AuditEntry
from runs.actions import check_start_run
from runs.models import BudgetCharge, RunStatus
from tenants.tokens import do_create_token
from tests.factories import default_tenant, member, principal, reviewer
from tests.pack_fixtures.probes import LEDGER, SCRIPT
from tests.runs.decide import decide
from tests.runs.helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)


def pay_once(amount: int = 500):
    SCRIPT.replies = [calls(("p", "probe.pay", {"amountCents": amount, "to": "bob"})), answer("paid")]
    return start("probe.payer", "pay bob")


def grant(granter, **fields) -> Grant:
    defaults = {"toolPattern": "probe.pay", "scope": "principal", "principal": principal().username}
    return check_create_grant(
        tenant=default_tenant(),
        acting_user=granter,
        fields=defaults | {"forSeconds": 3600, "maxCalls": 5} | fields,
        surface="api",
    )


def test_approve_and_allow_covers_calls_until_max_calls_then_asks():
    first = pay_once()
    assert first.status == RunStatus.SUSPENDED
    first = decide(first, "p", "approve", allow={"forSeconds": 7200, "maxCalls": 2})
    assert first.status == RunStatus.COMPLETED
    given = Grant.objects.get()
    assert (given.tool_pattern, given.agent_pattern, given.principal, given.max_calls) == (
        "probe.pay",
        "probe.payer",
        principal(),
        2,
    )
    assert given.approval == Approval.objects.get(run=first)

    for _ in range(2):
        run = pay_once()
        assert run.status == RunStatus.COMPLETED, run.failure_message
        gate = run.journal.get(kind="tool.called").payload["gate"]
        assert gate["grantId"] == given.pk  # each use in the journal, with the grant's id
        assert gate["reason"].startswith(f"granted by {given.granter.username} (grant {given.pk})")
    assert pay_once().status == RunStatus.SUSPENDED
    given.refresh_from_db()
    assert (given.uses, GrantUse.objects.count(), len(LEDGER.payments)) == (2, 2, 3)
    assert AuditEntry.objects.filter(action="grant.created", target_id=str(given.pk)).exists()


def test_a_revoked_grant_covers_nothing_from_the_next_call():
    rita = reviewer("rita", role="admin")
    given = grant(rita)
    assert pay_once().status == RunStatus.COMPLETED
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {do_create_token(user=rita)[1]}")
    revoked = api.post(f"/api/v1/grants/{given.pk}/revoke")
    assert revoked.status_code == 200
    assert revoked.json()["status"] == "revoked"
    assert pay_once().status == RunStatus.SUSPENDED


def _rule(**fields):
    check_save_rule(
        tenant=default_tenant(),
        fields={"name": "payments", "tool_pattern": "probe.pay"} | fields,
        acting_user=None,
        surface="system",
    )


def test_a_grant_never_lifts_a_deny():
    grant(reviewer("rita", role="admin"))
    _rule(gate="deny", reason="no payments")
    run = pay_once()
    assert run.journal.get(kind="tool.refused").payload["result"]["error"]["code"] == "TOOL_NOT_ALLOWED"
    assert not GrantUse.objects.exists()


def test_a_grant_covers_no_call_that_needs_a_higher_role_than_its_granters():
    grant(reviewer("sam", role="standard"))
    _rule(gate="always_ask", required_role="senior")
    assert pay_once().status == RunStatus.SUSPENDED
    assert not GrantUse.objects.exists()


def test_a_grant_covers_no_call_that_needs_several_people_and_no_approval_of_one_gives_one():
    ada, bo = reviewer("ada", role="admin"), reviewer("bo", role="admin")
    _rule(gate="always_ask", required_approvals=2)
    grant(ada)
    run = pay_once()
    assert run.status == RunStatus.SUSPENDED
    assert not GrantUse.objects.exists()
    from approvals.actions.decisions import check_complete_approval

    approval = Approval.objects.get(run=run)
    with pytest.raises(ApprovalInputError, match="no grant may stand in for several people"):
        check_complete_approval(
            approval_id=approval.pk,
            acting_user=bo,
            decision="approve",
            allow={"forSeconds": 60, "maxCalls": 1},
        )
    approval.refresh_from_db()
    assert (approval.status, Grant.objects.count()) == ("pending", 1)  # the refused decision changed nothing


@override_settings(KINDGI_FOUR_EYES=True)
def test_under_four_eyes_a_grant_covers_no_call_of_its_granters_own_run():
    pat = principal()
    from approvals.models import Reviewer

    Reviewer.objects.create(user=pat, tenant=default_tenant(), role="admin", display_name="Pat")
    grant(pat)
    assert pay_once().status == RunStatus.SUSPENDED
    assert not GrantUse.objects.exists()


def test_a_grant_over_a_sum_stops_at_its_most():
    grant(reviewer("rita", role="admin"), maxCalls=None, sumOf="/amountCents", maxSum=1000)
    assert pay_once(600).status == RunStatus.COMPLETED
    assert pay_once(600).status == RunStatus.SUSPENDED


def test_grants_through_the_api_strict_and_each_sees_their_own():
    rita, tia = reviewer("rita", role="admin"), member("tia", tenant_admin=True)
    nobody = member("nora")

    def api(user):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {do_create_token(user=user)[1]}")
        return client

    body = {
        "toolPattern": "probe.pay",
        "scope": "principal",
        "principal": "pat",
        "maxCalls": 3,
        "forSeconds": 600,
    }
    principal()
    created = api(rita).post("/api/v1/grants", body, format="json")
    assert created.status_code == 201, created.json()
    assert created.json()["status"] == "active"
    assert created.json()["granter"] == "rita"

    refused = api(nobody).post("/api/v1/grants", body, format="json")
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "forbidden")
    bad = api(rita).post("/api/v1/grants", body | {"forSeconds": 10**6, "why": "x"}, format="json")
    assert bad.status_code == 400
    too_long = api(rita).post("/api/v1/grants", body | {"forSeconds": 90_000}, format="json")
    assert "KINDGI_GRANT_MAX_SECONDS" in too_long.json()["error"]["message"]
    assert Grant.objects.count() == 1

    assert [g["granter"] for g in api(tia).get("/api/v1/grants").json()["items"]] == ["rita"]
    assert api(nobody).get("/api/v1/grants").json()["items"] == []
    other = api(nobody).post(f"/api/v1/grants/{created.json()['id']}/revoke")
    assert other.status_code == 404
    assert api(tia).post(f"/api/v1/grants/{created.json()['id']}/revoke").json()["status"] == "revoked"


def spend(amount: int, to: str = "bob"):
    SCRIPT.replies = [calls(("p", "probe.pay", {"amountCents": amount, "to": to})), answer("paid")]
    return start("probe.spender", f"pay {to}")


def test_a_grant_does_not_stretch_a_budget_a_call_over_it_asks_a_person():
    _rule(gate="always_ask", budget={"scope": "tenant", "sumOf": "/amountCents", "maxSum": 1000})
    given = grant(reviewer("rita", role="admin"))
    assert spend(600).status == RunStatus.COMPLETED  # within the budget: the grant lets it run
    over = spend(600)
    assert over.status == RunStatus.SUSPENDED
    assert "over budget: 600 of 1,000 used in this tenant; this call 600" in over.waitpoint["gate"]["reason"]
    given.refresh_from_db()
    assert (given.uses, BudgetCharge.objects.count(), LEDGER.payments) == (1, 1, [(600, "bob")])


def test_concurrent_granted_calls_keep_a_budget_that_denies():
    _rule(
        gate="always_ask",
        budget={"scope": "tenant", "sumOf": "/amountCents", "maxSum": 5_000, "overBudget": "deny"},
    )
    grant(reviewer("rita", role="admin"), maxCalls=10)
    tenant, owner = default_tenant(), principal()
    together = threading.Barrier(3)

    def pay_once():
        try:
            together.wait()
            check_start_run(
                tenant=tenant,
                principal=owner,
                flow_id="probe.pay-flow",
                input={"amountCents": 2_000, "to": "bob"},
            )
        finally:
            connections.close_all()

    threads = [threading.Thread(target=pay_once) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(LEDGER.payments) == [(2_000, "bob"), (2_000, "bob")]
    assert BudgetCharge.objects.count() == 2
    assert (Grant.objects.get().uses, GrantUse.objects.count()) == (2, 2)


def test_a_granted_call_the_guardrails_then_refuse_gives_its_use_back():
    _rule(gate="always_ask")
    given = grant(reviewer("rita", role="admin"), maxCalls=1)
    refused = spend(600, to="mallory")
    assert refused.journal.get(kind="tool.refused").payload["reason"].startswith("refused by guardrail")
    given.refresh_from_db()
    assert (given.uses, given.used_sum, GrantUse.objects.count()) == (0, 0, 0)
    assert spend(600).status == RunStatus.COMPLETED  # its one call is still there to use


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("maxSum", "12", "must be a number"),
        ("maxSum", True, "must be a number"),
        ("maxSum", "1e3", "must be a number"),
        ("maxSum", 0, "must be a number above 0"),
        ("maxSum", 10**400, "must be a number above 0"),
        ("expiresAt", "2030-01-01T10:00:00", "must say its time zone"),
        ("expiresAt", 1893492000, "must be a date and time"),
    ],
)
def test_a_grants_numbers_and_times_are_taken_only_as_json_writes_them(field, value, says):
    rita = reviewer("rita", role="admin")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {do_create_token(user=rita)[1]}")
    principal()
    body = {"toolPattern": "probe.pay", "scope": "principal", "principal": "pat", "sumOf": "/amountCents"}
    body |= {"maxSum": 1000, "forSeconds": 600} | {field: value}
    if field == "expiresAt":
        body.pop("forSeconds")
    refused = client.post("/api/v1/grants", body, format="json")
    assert refused.status_code == 400, refused.json()
    assert says in refused.json()["error"]["message"], refused.json()
    assert not Grant.objects.exists()

    run = pay_once()
    approval = Approval.objects.get(run=run)
    allow = {"sumOf": "/amountCents", "maxSum": 1000, "forSeconds": 600} | {field: value}
    if field == "expiresAt":
        allow.pop("forSeconds")
    body = {"decision": "approve", "allow": allow}
    refused = client.post(f"/api/v1/approvals/{approval.pk}/complete", body, format="json")
    assert refused.status_code == 400, refused.json()
    assert says in refused.json()["error"]["message"], refused.json()
    approval.refresh_from_db()
    assert (approval.status, Grant.objects.count()) == ("pending", 0)
