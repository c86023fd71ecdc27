"""Request changes: a reviewer sends a model's call back with a note. The call does not run; the
model reads the note as the call's result and may propose another call, which goes through the
door again. A flow's step has no model to revise it, and a turn has only so many rounds."""

import pytest
from django.test import override_settings

from approvals.actions.rules import check_save_rule
from approvals.models import Approval, Decision
from runs.actions import check_start_run
from runs.models import RunStatus
from tests.api.conftest import client_for
from tests.factories import default_tenant, principal, reviewer
from tests.pack_fixtures.probes import LEDGER, SCRIPT
from tests.runs.helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = "Pay 400, not 500: the rest was refunded."


def pay(call_id: str, amount: int):
    return calls((call_id, "probe.pay", {"amountCents": amount, "to": "bob"}))


def rita():
    from django.contrib.auth import get_user_model

    found = get_user_model().objects.filter(username="rita").first()
    return found or reviewer("rita", role="admin")


def request_changes(approval: Approval, note: str = NOTE, *, by=None):
    return client_for(by or rita()).post(
        f"/api/v1/approvals/{approval.pk}/complete",
        {"decision": "request_changes", "rationale": note},
        format="json",
    )


def test_the_model_reads_the_note_and_its_next_call_is_a_new_approval():
    SCRIPT.replies = [pay("p1", 500), pay("p2", 400), answer("paid 400")]
    run = start("probe.payer", "pay bob 500")
    first = Approval.objects.get(run=run)

    answered = request_changes(first)
    assert answered.status_code == 200, answered.json()
    assert answered.json()["approval"]["status"] == "changes_requested"
    assert answered.json()["decision"]["decision"] == "request_changes"
    run.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED
    assert run.waitpoint["callId"] == "p2"  # the model's new call waits for a person in turn
    assert LEDGER.payments == []  # the first call never ran
    told = next(m for m in run.messages if m.get("callId") == "p1")
    assert told["content"] == {"status": "changes_requested", "note": NOTE}
    refused = run.journal.get(kind="tool.refused").payload
    assert (refused["callId"], refused["reason"]) == ("p1", "Rita asked for changes")

    second = Approval.objects.get(run=run, call_id="p2")
    approved = client_for(rita()).post(
        f"/api/v1/approvals/{second.pk}/complete", {"decision": "approve"}, format="json"
    )
    assert approved.status_code == 200
    run.refresh_from_db()
    assert (run.status, run.output) == (RunStatus.COMPLETED, {"reply": "paid 400"})
    assert LEDGER.payments == [(400, "bob")]


def test_a_request_for_changes_needs_a_note_and_a_refused_one_changes_nothing():
    SCRIPT.replies = [pay("p1", 500), answer("paid")]
    run = start("probe.payer", "pay bob")
    approval = Approval.objects.get(run=run)
    answered = request_changes(approval, note="  ")
    assert answered.status_code == 400
    assert answered.json()["error"]["message"] == (
        "/rationale: a request for changes needs a note saying what to change"
    )
    approval.refresh_from_db()
    assert (approval.status, Decision.objects.count()) == ("pending", 0)


def test_a_flows_step_has_no_model_to_change_it():
    check_save_rule(
        tenant=default_tenant(),
        fields={"name": "payments", "tool_pattern": "probe.pay", "gate": "always_ask"},
        acting_user=None,
        surface="system",
    )
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        flow_id="probe.pay-flow",
        input={"amountCents": 500, "to": "bob"},
    )
    approval = Approval.objects.get(run=run)
    answered = request_changes(approval)
    assert answered.status_code == 409
    assert "a flow has no model to change it: approve or reject it" in answered.json()["error"]["message"]
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert "request_changes" not in approval.decisions_offered


@override_settings(KINDGI_MAX_CHANGE_REQUESTS=2)
def test_after_the_most_rounds_a_turn_allows_the_reviewer_approves_or_rejects():
    SCRIPT.replies = [pay("p1", 500), pay("p2", 450), pay("p3", 420), answer("paid")]
    run = start("probe.payer", "pay bob")
    for call_id in ("p1", "p2"):
        assert request_changes(Approval.objects.get(run=run, call_id=call_id)).status_code == 200
    third = Approval.objects.get(run=run, call_id="p3")
    answered = request_changes(third)
    assert answered.status_code == 409
    assert answered.json()["error"]["message"] == (
        "changes were requested 2 times in this turn already, the most allowed "
        "(KINDGI_MAX_CHANGE_REQUESTS=2): approve or reject this call"
    )
    third.refresh_from_db()
    assert third.status == "pending"
