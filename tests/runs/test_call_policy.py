"""One door: every call, from an agent or a flow's tool step, first use or resumed, passes the
same call policy, and tenant policy is a floor that code cannot lower."""

from unittest import mock

import pytest

from approvals.actions.decisions import check_complete_approval
from approvals.actions.rules import check_save_rule
from approvals.exceptions import DecisionForbiddenError
from approvals.models import Approval, ApprovalStatus
from packs.acme_ops.status_page import STATUS_PAGE
from packs.my_pack.order_book import ORDER_BOOK
from runs.actions import check_start_run
from runs.executor import execute
from runs.models import JournalEntry, Run, RunStatus
from tests.factories import default_tenant, principal, reviewer
from tests.pack_fixtures.probes import LEDGER, SCRIPT, TIMELINE
from tests.runs.helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = {"orderId": "ord_1001", "text": "Customer called"}


def rule(**fields):
    return check_save_rule(
        tenant=default_tenant(), fields={"name": "rule", **fields}, acting_user=None, surface="system"
    )


def note_order() -> Run:
    return check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.note-order",
        input=NOTE,
    )


def result_of(run: Run, call_id: str):
    return next(m["content"] for m in run.messages if m.get("callId") == call_id)


class TestFlowToolSteps:
    def test_a_tenant_deny_rule_stops_the_step_and_nothing_is_written(self):
        rule(tool_pattern="my-pack.add-order-note", gate="deny", reason="Notes are frozen.", name="no notes")
        run = note_order()
        assert run.status == RunStatus.FAILED
        assert run.failure_message == (
            'tool-denied: tool "my-pack.add-order-note" is denied by rule "no notes": Notes are frozen.'
        )
        assert ORDER_BOOK.get("ord_1001").notes == []
        assert not run.journal.filter(kind="tool.called", node_id="note").exists()
        refused = run.journal.get(kind="tool.refused", node_id="note").payload
        assert refused["gate"]["gate"] == "refuse"
        assert refused["gate"]["ruleName"] == "no notes"

    def test_a_deny_without_a_reason_says_only_which_rule(self):
        rule(tool_pattern="my-pack.add-order-note", gate="deny", name="no notes")
        assert (
            note_order().failure_message
            == 'tool-denied: tool "my-pack.add-order-note" is denied by rule "no notes"'
        )

    def test_an_asking_rule_suspends_the_flow_and_a_decision_resumes_it_from_that_step(self):
        rule(tool_pattern="my-pack.add-order-note", gate="always_ask", required_role="senior")
        run = note_order()
        assert run.status == RunStatus.SUSPENDED
        approval = run.approvals.get()
        assert approval.subject_ref == {
            "runId": str(run.pk),
            "toolId": "my-pack.add-order-note",
            "toolVersion": "0.1.0",
            "agentId": None,
            "flowId": "my-pack.note-order",
            "nodeId": "note",
            "callId": "note",
            "arguments": NOTE,
        }
        assert approval.provenance_ref == {"runId": str(run.pk)}
        assert approval.required_role == "senior"
        assert ORDER_BOOK.get("ord_1001").notes == []
        assert run.journal.get(kind="wait.suspended").node_id == "note"

        with pytest.raises(DecisionForbiddenError, match="role 'senior'"):
            check_complete_approval(approval_id=approval.pk, acting_user=reviewer("sam"), decision="approve")
        check_complete_approval(
            approval_id=approval.pk, acting_user=reviewer("sue", role="senior"), decision="approve"
        )
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED
        assert run.output == {"orderId": "ord_1001", "noteId": "note_1", "noteCount": 1}
        assert ORDER_BOOK.get("ord_1001").notes == ["Customer called"]
        kinds = [(e.kind, e.node_id) for e in run.journal.all()]
        # The lookup ran once, before the wait; the note after it.
        assert kinds.count(("node.started", "lookup")) == 1
        assert kinds[kinds.index(("wait.resumed", "note")) :] == [
            ("wait.resumed", "note"),
            ("node.started", "note"),
            ("tool.called", "note"),
            ("tool.completed", "note"),
            ("node.completed", "note"),
            ("run.completed", ""),
        ]

    def test_a_rejected_step_fails_the_flow_and_writes_nothing(self):
        rule(tool_pattern="my-pack.add-order-note", gate="always_ask")
        run = note_order()
        check_complete_approval(
            approval_id=run.approvals.get().pk,
            acting_user=reviewer("sam"),
            decision="reject",
            rationale="Not this customer",
        )
        run.refresh_from_db()
        assert run.status == RunStatus.FAILED
        assert run.failure_message == (
            'tool-rejected: tool "my-pack.add-order-note" was rejected by Sam: Not this customer'
        )
        assert ORDER_BOOK.get("ord_1001").notes == []

    def test_an_ask_once_rule_asks_at_the_first_step_of_a_run_and_not_again(self):
        rule(tool_pattern="probe.pay", gate="ask_once")
        run = check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="probe.pay-twice",
            input={"amountCents": 5, "to": "bob"},
        )
        assert run.waitpoint["nodeId"] == "first"
        check_complete_approval(
            approval_id=run.approvals.get().pk, acting_user=reviewer("sam"), decision="approve"
        )
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED
        assert LEDGER.payments == [(5, "bob"), (5, "bob")]
        assert run.approvals.count() == 1

    def test_rules_for_an_agent_do_not_gate_a_flow_step(self):
        rule(tool_pattern="my-pack.add-order-note", agent_pattern="my-pack.*", gate="deny")
        assert note_order().status == RunStatus.COMPLETED

    def test_a_dry_run_stops_before_any_gate(self):
        rule(tool_pattern="my-pack.add-order-note", gate="always_ask")
        run = check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="my-pack.note-order",
            input=NOTE,
            dry_run=True,
        )
        assert run.failure_message.startswith('dry-run-effectful-tool: tool "my-pack.add-order-note"')
        assert not Approval.objects.exists()


class TestCodeCannotLowerTenantPolicy:
    def test_a_code_always_ask_does_not_hide_a_tenant_deny(self):
        rule(tool_pattern="acme-ops.post-update", gate="deny", reason="Status page frozen.")
        run = start("acme-ops.status-agent", "Checkout is back to normal.")
        assert run.status == RunStatus.COMPLETED
        result = result_of(run, "call_post_update")
        assert result["error"]["code"] == "TOOL_NOT_ALLOWED"
        assert "Status page frozen." in result["error"]["message"]
        assert not Approval.objects.exists()
        assert STATUS_PAGE.posts == []

    def test_a_code_always_ask_does_not_hide_the_rules_required_role(self):
        rule(tool_pattern="acme-ops.post-update", gate="always_ask", required_role="senior", ttl_seconds=60)
        run = start("acme-ops.status-agent", "Checkout is back to normal.")
        approval = run.approvals.get()
        assert approval.required_role == "senior"
        assert approval.expires_at is not None
        assert approval.gate["reason"] == 'override always_ask (agent code); rule "rule" (always_ask)'
        with pytest.raises(DecisionForbiddenError):
            check_complete_approval(approval_id=approval.pk, acting_user=reviewer("sam"), decision="approve")
        assert Approval.objects.get().status == ApprovalStatus.PENDING

    def test_a_code_never_ask_does_not_lift_a_tenant_deny(self):
        rule(tool_pattern="probe.write", gate="deny")
        SCRIPT.replies = [calls(("w", "probe.write", {"label": "w", "pause_ms": 0})), answer()]
        run = start("probe.always")  # its code says never_ask for probe.write
        assert result_of(run, "w")["error"]["code"] == "TOOL_NOT_ALLOWED"
        assert TIMELINE.calls("w") == 0

    def test_a_code_never_ask_does_not_lift_a_tenant_ask(self):
        rule(tool_pattern="probe.write", gate="always_ask", required_role="admin")
        SCRIPT.replies = [calls(("w", "probe.write", {"label": "w", "pause_ms": 0})), answer()]
        run = start("probe.always")
        assert run.status == RunStatus.SUSPENDED
        assert run.approvals.get().required_role == "admin"
        assert TIMELINE.calls("w") == 0


def approve_without_running(approval, user, **options):
    """Decide, with the resumed run queued for a worker but not executed (so the world may change
    first): as if the tasks went to the database queue."""
    with (
        mock.patch("runs.dispatch.executes_here", return_value=False),
        mock.patch("runs.dispatch._enqueue_on_commit") as enqueue,
    ):
        check_complete_approval(approval_id=approval.pk, acting_user=user, decision="approve", **options)
    enqueue.assert_called_once_with(approval.run_id, resumed=True)
    run = Run.objects.get(pk=approval.run_id)
    assert run.status == RunStatus.QUEUED
    return run


class TestApprovalsBindWhatRuns:
    def pay_and_wait(self, amount=500, to="alice"):
        SCRIPT.replies = [calls(("p", "probe.pay", {"amountCents": amount, "to": to})), answer("paid")]
        run = start("probe.payer")
        assert run.status == RunStatus.SUSPENDED
        return run, run.approvals.get()

    def test_a_deny_rule_added_after_the_approval_refuses_the_call_when_the_run_resumes(self):
        run, approval = self.pay_and_wait()
        approve_without_running(approval, reviewer("sam"))
        rule(tool_pattern="probe.pay", gate="deny", reason="Payments are frozen.")
        execute(run.pk)
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED
        assert LEDGER.payments == []
        result = result_of(run, "p")
        assert result["error"]["code"] == "TOOL_NOT_ALLOWED"
        assert "Payments are frozen." in result["error"]["message"]

    def test_the_call_that_runs_must_match_the_digest_that_was_approved(self):
        run, approval = self.pay_and_wait()
        approve_without_running(approval, reviewer("sam"))
        resumed = JournalEntry.objects.get(run=run, kind="wait.resumed")
        assert resumed.payload["resolution"]["digest"] == approval.digest
        resumed.payload["resolution"]["digest"] = "sha256:" + "0" * 64  # not the call that waits
        resumed.save()
        execute(run.pk)
        run.refresh_from_db()
        assert LEDGER.payments == []
        assert result_of(run, "p")["error"]["code"] == "APPROVAL_MISMATCH"

    def test_an_approved_call_runs_with_exactly_what_was_approved(self):
        run, approval = self.pay_and_wait()
        run = approve_without_running(
            approval, reviewer("sam"), arguments={"amountCents": 400, "to": "alice"}
        )
        execute(run.pk)
        run.refresh_from_db()
        assert LEDGER.payments == [(400, "alice")]
        called = run.journal.get(kind="tool.called").payload
        assert (called["arguments"], called["modelArguments"]) == (
            {"amountCents": 400, "to": "alice"},
            {"amountCents": 500, "to": "alice"},
        )
