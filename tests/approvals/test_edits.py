"""A reviewer's edited arguments pass the call policy as if the model had asked for them: an edit
the tenant's rules would deny, or that needs a role (or a reviewer) the decider is not, is
refused and the approval stays pending."""

import pytest
from rest_framework.test import APIClient

from approvals.actions.decisions import check_complete_approval
from approvals.actions.rules import check_save_rule
from approvals.exceptions import ApprovalConflictError, ApprovalInputError, DecisionForbiddenError
from approvals.models import Approval, ApprovalStatus, Decision
from runs.models import RunStatus
from tenants.tokens import do_create_token
from tests.factories import default_tenant, reviewer
from tests.pack_fixtures.probes import LEDGER, SCRIPT
from tests.runs.helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def payment_rules():
    """The seeds' limits: nothing above 100,000 cents; a senior above 10,000."""
    tenant = default_tenant()
    check_save_rule(
        tenant=tenant,
        fields={
            "name": "no huge payments",
            "tool_pattern": "probe.pay",
            "condition": "/amountCents > 100000",
            "gate": "deny",
            "reason": "Above the limit.",
        },
        acting_user=None,
        surface="system",
    )
    check_save_rule(
        tenant=tenant,
        fields={
            "name": "big payments",
            "tool_pattern": "probe.pay",
            "condition": "/amountCents > 10000",
            "gate": "always_ask",
            "required_role": "senior",
        },
        acting_user=None,
        surface="system",
    )


def waiting_payment():
    SCRIPT.replies = [calls(("p", "probe.pay", {"amountCents": 500, "to": "bob"})), answer("paid")]
    run = start("probe.payer")
    assert run.status == RunStatus.SUSPENDED
    approval = run.approvals.get()
    assert approval.required_role == "standard"  # 500 cents: only the agent's own ask
    return run, approval


def still_pending(run, approval):
    approval.refresh_from_db()
    run.refresh_from_db()
    assert (approval.status, run.status) == (ApprovalStatus.PENDING, RunStatus.SUSPENDED)
    assert not Decision.objects.exists()
    assert LEDGER.payments == []


def approve(approval, user, arguments):
    return check_complete_approval(
        approval_id=approval.pk, acting_user=user, decision="approve", rationale="ok", arguments=arguments
    )


def test_an_edit_a_rule_would_deny_is_refused_and_the_approval_stays_pending(payment_rules):
    run, approval = waiting_payment()
    with pytest.raises(ApprovalConflictError, match=r'rule "no huge payments" \(deny\): Above the limit'):
        approve(approval, reviewer("sam"), {"amountCents": 5_000_000, "to": "mallory"})
    still_pending(run, approval)


def test_an_edit_that_needs_a_higher_role_is_refused_for_a_standard_reviewer(payment_rules):
    run, approval = waiting_payment()
    with pytest.raises(DecisionForbiddenError, match="needs a reviewer with the role 'senior'"):
        approve(approval, reviewer("sam"), {"amountCents": 50_000, "to": "bob"})
    still_pending(run, approval)


def test_a_senior_may_approve_the_bigger_payment_and_it_runs_as_edited(payment_rules):
    run, approval = waiting_payment()
    approve(approval, reviewer("sue", role="senior"), {"amountCents": 50_000, "to": "bob"})
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert LEDGER.payments == [(50_000, "bob")]
    result = next(m["content"] for m in run.messages if m.get("callId") == "p")
    assert result["note"].startswith("A reviewer changed the arguments")
    assert Decision.objects.get().arguments == {"amountCents": 50_000, "to": "bob"}


def test_an_edit_only_named_reviewers_may_approve_is_refused_for_anyone_else():
    nina = reviewer("nina", role="senior")
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "to mallory",
            "tool_pattern": "probe.pay",
            "condition": '/to == "mallory"',
            "gate": "always_ask",
        },
        reviewers=[nina],
        acting_user=None,
        surface="system",
    )
    run, approval = waiting_payment()
    with pytest.raises(DecisionForbiddenError, match="only the reviewers its rule names"):
        approve(approval, reviewer("sam", role="admin"), {"amountCents": 500, "to": "mallory"})
    still_pending(run, approval)


def test_an_edit_with_an_unknown_or_invalid_field_names_it():
    run, approval = waiting_payment()
    with pytest.raises(ApprovalInputError) as error:
        approve(approval, reviewer("sam"), {"amountCents": 0, "to": "bob", "memo": "x"})
    assert error.value.errors == [
        "/arguments/amountCents: Input should be greater than or equal to 1",
        "/arguments/memo: unknown field (the fields are: amountCents, to)",
    ]
    still_pending(run, approval)


def test_through_the_api_the_refusal_says_why_and_changes_nothing(payment_rules):
    run, approval = waiting_payment()
    api = APIClient()
    _, token = do_create_token(user=reviewer("sam"))
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    url = f"/api/v1/approvals/{approval.pk}/complete"
    denied = api.post(
        url, {"decision": "approve", "arguments": {"amountCents": 5_000_000, "to": "mallory"}}, format="json"
    )
    assert denied.status_code == 409
    assert "would not run" in denied.json()["error"]["message"]
    senior = api.post(
        url, {"decision": "approve", "arguments": {"amountCents": 50_000, "to": "bob"}}, format="json"
    )
    assert (senior.status_code, senior.json()["error"]["code"]) == (403, "forbidden")
    still_pending(run, approval)
    assert Approval.objects.get().status == ApprovalStatus.PENDING


def test_a_decision_with_edited_arguments_builds_the_runs_policy_context_once():
    """The edit is judged with the run's policy context, and the execution the decision resumes
    here is handed that context rather than building it again: in a conversation's later turn,
    its approvals in the earlier turns are read once for the decision and its resume together."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from runs.actions import check_start_run
    from tests.factories import principal

    tenant = default_tenant()
    ada = reviewer("ada", role="admin", tenant=tenant)
    SCRIPT.replies = [
        answer("first"),
        calls(("w", "probe.write", {"label": "asked", "pause_ms": 0})),
        answer("written"),
    ]
    first = start("probe.gated", "first")
    second = check_start_run(
        tenant=tenant,
        principal=principal(tenant),
        agent_id="probe.gated",
        input={"userMessage": "write"},
        conversation_id=first.conversation_id,
    )
    approval = Approval.objects.get(run=second)
    with CaptureQueriesContext(connection) as captured:
        check_complete_approval(
            approval_id=approval.pk,
            acting_user=ada,
            decision="approve",
            arguments={"label": "edited", "pause_ms": 0},
        )
    second.refresh_from_db()
    assert second.status == RunStatus.COMPLETED
    earlier_approvals = [
        query["sql"]
        for query in captured.captured_queries
        if query["sql"].startswith("SELECT") and "wait.resumed" in query["sql"]
    ]
    assert len(earlier_approvals) == 1, "\n".join(earlier_approvals)
