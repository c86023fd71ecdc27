"""Deciding approvals: the seed's story, and every way a decision is refused without changing anything."""

import pytest

from approvals.actions.decisions import check_complete_approval
from approvals.exceptions import (
    ApprovalConflictError,
    ApprovalInputError,
    ApprovalNotFoundError,
    DecisionForbiddenError,
    ImmutableRecordError,
    NotAReviewerError,
)
from approvals.models import Approval, Decision
from packs.acme_ops.status_page import STATUS_PAGE
from runs.actions import check_start_run, do_cancel_run
from runs.models import Run, RunStatus
from tests.factories import default_tenant, member, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def status_run(message="Checkout is back to normal.", **options) -> Run:
    if "acting_user" not in options:
        options.setdefault("principal", principal())
    return check_start_run(
        tenant=default_tenant(), agent_id="acme-ops.status-agent", input={"userMessage": message}, **options
    )


def unchanged(run: Run, approval: Approval) -> None:
    """A refused decision changed nothing."""
    run.refresh_from_db()
    approval.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED
    assert approval.status == "pending"
    assert not Decision.objects.filter(approval=approval).exists()
    assert STATUS_PAGE.posts == []


class TestTheSeedStory:
    def test_the_run_waits_on_one_pending_approval_of_the_seeds_shape(self):
        run = status_run()
        assert run.status == RunStatus.SUSPENDED
        approval = Approval.objects.get()
        assert approval.subject_kind == "tool-call:pending"
        assert approval.subject_ref == {
            "runId": str(run.pk),
            "toolId": "acme-ops.post-update",
            "toolVersion": "0.1.0",
            "agentId": "acme-ops.status-agent",
            "flowId": None,
            "nodeId": None,
            "callId": "call_post_update",
            "arguments": {"message": "Checkout is back to normal."},
        }
        assert (approval.required_role, approval.status) == ("standard", "pending")
        assert approval.title == "HITL review: acme-ops.post-update"
        assert approval.provenance_ref == {"runId": str(run.pk)}
        assert approval.tenant == run.tenant

    def test_approve_runs_the_tool_in_the_same_call(self):
        run = status_run()
        ada = reviewer("ada")
        completion = check_complete_approval(
            approval_id=run.approvals.get().pk,
            acting_user=ada,
            decision="approve",
            rationale="Confirmed with the on-call engineer",
        )
        assert (completion.kind, completion.waitpoint_resolved) == ("terminal", True)
        assert completion.approval.status == "approved"
        decision = completion.decision
        assert (decision.decision, decision.rationale, decision.reviewer_role_at_decision) == (
            "approve",
            "Confirmed with the on-call engineer",
            "standard",
        )
        assert decision.reviewer_name == "Ada"
        assert decision.decided_at == completion.approval.decided_at
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED
        result = next(m["content"] for m in run.messages if m["role"] == "tool")
        assert result["posted"] is True
        assert [p.message for p in STATUS_PAGE.posts] == ["Checkout is back to normal."]

    def test_reject_completes_the_run_without_running_the_tool(self):
        run = status_run()
        check_complete_approval(
            approval_id=run.approvals.get().pk,
            acting_user=reviewer("ada"),
            decision="reject",
            rationale="Not confirmed yet",
        )
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED
        result = next(m["content"] for m in run.messages if m["role"] == "tool")
        assert result == {"status": "rejected", "rationale": "Not confirmed yet"}
        assert STATUS_PAGE.posts == []

    def test_in_a_flow_the_approval_belongs_to_the_agent_steps_own_run(self):
        flow = check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="acme-ops.status-flow",
            input={"userMessage": "Up again."},
        )
        assert flow.status == RunStatus.SUSPENDED
        assert flow.journal.get(kind="wait.suspended").node_id == "respond"
        child = flow.children.get()
        approval = Approval.objects.get()
        assert approval.provenance_ref == {"runId": str(child.pk)}
        assert approval.run != flow
        check_complete_approval(approval_id=approval.pk, acting_user=reviewer("ada"), decision="approve")
        flow.refresh_from_db()
        assert flow.status == RunStatus.COMPLETED
        assert flow.output == {"reply": "Posted to the status page: Up again."}


class TestRefusals:
    def test_a_rejection_needs_a_rationale(self):
        run = status_run()
        approval = run.approvals.get()
        with pytest.raises(ApprovalInputError) as error:
            check_complete_approval(approval_id=approval.pk, acting_user=reviewer("ada"), decision="reject")
        assert error.value.errors == ["/rationale: a rejection needs a rationale"]
        unchanged(run, approval)

    def test_the_decision_must_be_approve_or_reject(self):
        run = status_run()
        approval = run.approvals.get()
        with pytest.raises(ApprovalInputError, match="/decision: 'maybe' is not one of: approve, reject"):
            check_complete_approval(approval_id=approval.pk, acting_user=reviewer("ada"), decision="maybe")
        unchanged(run, approval)

    def test_a_second_decision_is_a_conflict_naming_the_first(self):
        run = status_run()
        approval = run.approvals.get()
        check_complete_approval(approval_id=approval.pk, acting_user=reviewer("ada"), decision="approve")
        with pytest.raises(ApprovalConflictError, match=r"is already approved: approve by Ada at "):
            check_complete_approval(
                approval_id=approval.pk, acting_user=reviewer("bob"), decision="reject", rationale="late"
            )
        assert len(STATUS_PAGE.posts) == 1
        assert Decision.objects.count() == 1

    def test_a_reviewer_below_the_required_role_is_refused_naming_it(self):
        run = status_run()
        approval = run.approvals.get()
        Approval.objects.filter(pk=approval.pk).update(required_role="senior")
        with pytest.raises(
            DecisionForbiddenError,
            match="needs a reviewer with the role 'senior' or higher; Ada is 'standard'",
        ):
            check_complete_approval(approval_id=approval.pk, acting_user=reviewer("ada"), decision="approve")
        unchanged(run, approval)
        check_complete_approval(
            approval_id=approval.pk, acting_user=reviewer("root", role="admin"), decision="approve"
        )
        assert len(STATUS_PAGE.posts) == 1

    def test_a_user_who_is_not_a_reviewer_is_refused(self):
        run = status_run()
        approval = run.approvals.get()
        with pytest.raises(NotAReviewerError, match="not a reviewer; register as one"):
            check_complete_approval(approval_id=approval.pk, acting_user=member("carl"), decision="approve")
        unchanged(run, approval)

    def test_an_approval_of_another_tenant_is_not_found(self):
        run = status_run()
        approval = run.approvals.get()
        outsider = reviewer("eve", role="admin", tenant=other_tenant())
        with pytest.raises(ApprovalNotFoundError, match=f"there is no approval {approval.pk}"):
            check_complete_approval(approval_id=approval.pk, acting_user=outsider, decision="approve")
        unchanged(run, approval)

    def test_four_eyes_keeps_a_reviewer_from_deciding_calls_of_their_own_run(self, settings):
        settings.KINDGI_FOUR_EYES = True
        ada = reviewer("ada")
        run = check_start_run(agent_id="acme-ops.status-agent", input={"userMessage": "Up."}, acting_user=ada)
        approval = run.approvals.get()
        with pytest.raises(DecisionForbiddenError, match="four-eyes: this run is yours"):
            check_complete_approval(approval_id=approval.pk, acting_user=ada, decision="approve")
        unchanged(run, approval)
        check_complete_approval(approval_id=approval.pk, acting_user=reviewer("bob"), decision="approve")
        assert len(STATUS_PAGE.posts) == 1

    def test_four_eyes_looks_through_a_flow_to_who_started_it(self, settings):
        settings.KINDGI_FOUR_EYES = True
        ada = reviewer("ada")
        flow = check_start_run(flow_id="acme-ops.status-flow", input={"userMessage": "Up."}, acting_user=ada)
        approval = Approval.objects.get(run__parent=flow)
        with pytest.raises(DecisionForbiddenError, match="four-eyes"):
            check_complete_approval(approval_id=approval.pk, acting_user=ada, decision="approve")

    def test_cancelling_the_run_cancels_its_approval(self):
        run = status_run()
        approval = run.approvals.get()
        do_cancel_run(run.pk)
        approval.refresh_from_db()
        assert approval.status == "cancelled"
        with pytest.raises(ApprovalConflictError, match="is already cancelled"):
            check_complete_approval(approval_id=approval.pk, acting_user=reviewer("ada"), decision="approve")
        assert STATUS_PAGE.posts == []


class TestEditedArguments:
    def test_the_tool_runs_with_the_reviewers_arguments_and_the_journal_keeps_both(self):
        run = status_run("chekout is back")
        approval = run.approvals.get()
        completion = check_complete_approval(
            approval_id=approval.pk,
            acting_user=reviewer("ada"),
            decision="approve",
            arguments={"message": "Checkout is back to normal."},
        )
        assert completion.decision.arguments == {"message": "Checkout is back to normal."}
        assert [p.message for p in STATUS_PAGE.posts] == ["Checkout is back to normal."]
        run.refresh_from_db()
        called = run.journal.get(kind="tool.called").payload
        assert called["arguments"] == {"message": "Checkout is back to normal."}
        assert called["modelArguments"] == {"message": "chekout is back"}
        result = next(m["content"] for m in run.messages if m["role"] == "tool")
        assert result["arguments"] == {"message": "Checkout is back to normal."}
        assert "reviewer changed the arguments" in result["note"]
        assert result["result"]["posted"] is True
        # the approval keeps the model's arguments: what was asked for
        approval.refresh_from_db()
        assert approval.arguments == {"message": "chekout is back"}

    def test_edited_arguments_are_validated_and_a_bad_edit_changes_nothing(self):
        run = status_run()
        approval = run.approvals.get()
        with pytest.raises(ApprovalInputError) as error:
            check_complete_approval(
                approval_id=approval.pk,
                acting_user=reviewer("ada"),
                decision="approve",
                arguments={"message": ""},
            )
        assert error.value.errors == ["/arguments/message: String should have at least 1 character"]
        unchanged(run, approval)

    def test_only_an_approval_edits_arguments(self):
        run = status_run()
        approval = run.approvals.get()
        with pytest.raises(ApprovalInputError, match="/arguments: only an approval can change the arguments"):
            check_complete_approval(
                approval_id=approval.pk,
                acting_user=reviewer("ada"),
                decision="reject",
                rationale="no",
                arguments={"message": "x"},
            )
        unchanged(run, approval)


def test_a_decision_is_an_immutable_audit_record():
    run = status_run()
    completion = check_complete_approval(
        approval_id=run.approvals.get().pk, acting_user=reviewer("ada"), decision="approve", rationale="ok"
    )
    decision = Decision.objects.get(pk=completion.decision.pk)
    decision.rationale = "rewritten"
    with pytest.raises(ImmutableRecordError, match="cannot be changed"):
        decision.save()
    with pytest.raises(ImmutableRecordError, match="cannot be deleted"):
        decision.delete()
    assert Decision.objects.get(pk=decision.pk).rationale == "ok"
