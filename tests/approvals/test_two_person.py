"""Two-person (M-of-N) approvals: a rule asks for N approvals from distinct reviewers; each is a
decision of its own, chained and immutable; the run goes on only at the Nth; any rejection
rejects; nobody approves twice; every surface says "1 of 2"."""

from datetime import timedelta

import pytest
from django.test import Client

from approvals.actions.decisions import CompletionKind, check_complete_approval
from approvals.actions.rules import check_save_rule
from approvals.chain import first_break
from approvals.exceptions import ApprovalInputError, DecisionForbiddenError
from approvals.models import Approval, ApprovalStatus, Decision
from runs.models import RunStatus
from tests.api.conftest import client_for
from tests.factories import default_tenant, reviewer
from tests.pack_fixtures.probes import LEDGER, SCRIPT
from tests.runs.helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)


def two_person_rule(**fields):
    return check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "payments need two",
            "tool_pattern": "probe.pay",
            "gate": "always_ask",
            "required_approvals": 2,
        }
        | fields,
        acting_user=None,
        surface="system",
    )


def waiting_payment():
    SCRIPT.replies = [calls(("p", "probe.pay", {"amountCents": 500, "to": "bob"})), answer("paid")]
    run = start("probe.payer")
    assert run.status == RunStatus.SUSPENDED
    return run, run.approvals.get()


def approve(approval, user, **more):
    return check_complete_approval(approval_id=approval.pk, acting_user=user, decision="approve", **more)


class TestTwoApprovals:
    def test_the_run_goes_on_only_at_the_second_distinct_approval(self):
        two_person_rule()
        sam, sue = reviewer("sam"), reviewer("sue")
        run, approval = waiting_payment()
        assert approval.required_approvals == 2

        first = approve(approval, sam, rationale="looks right")
        assert (first.kind, first.waitpoint_resolved) == (CompletionKind.PARTIAL, False)
        run.refresh_from_db()
        approval.refresh_from_db()
        assert run.status == RunStatus.SUSPENDED
        assert approval.status == ApprovalStatus.PENDING
        assert approval.decision is None
        assert [given["reviewer"] for given in approval.approvals_given] == ["Sam"]
        assert LEDGER.payments == []

        # Sam cannot be the second: it needs another person.
        with pytest.raises(DecisionForbiddenError, match=r"you already approved this \(1 of 2 approvals\)"):
            approve(approval, sam)
        assert Decision.objects.filter(approval=approval).count() == 1

        second = approve(approval, sue)
        assert (second.kind, second.waitpoint_resolved) == (CompletionKind.TERMINAL, True)
        run.refresh_from_db()
        approval.refresh_from_db()
        assert run.status == RunStatus.COMPLETED
        assert approval.status == ApprovalStatus.APPROVED
        assert LEDGER.payments == [(500, "bob")]
        decisions = list(Decision.objects.filter(approval=approval).order_by("sequence"))
        assert [(d.reviewer_name, d.decision) for d in decisions] == [("Sam", "approve"), ("Sue", "approve")]
        assert approval.decision == decisions[1]
        assert first_break(Decision.objects.filter(tenant=default_tenant()).order_by("sequence")) is None
        resumed = run.journal.get(kind="wait.resumed").payload["resolution"]
        assert (resumed["reviewer"], resumed["reviewers"]) == ("Sam and Sue", ["Sam", "Sue"])

    def test_a_rejection_after_one_approval_rejects(self):
        two_person_rule()
        sam, sue = reviewer("sam"), reviewer("sue")
        run, approval = waiting_payment()
        approve(approval, sam)
        rejected = check_complete_approval(
            approval_id=approval.pk, acting_user=sue, decision="reject", rationale="wrong payee"
        )
        assert rejected.kind == CompletionKind.TERMINAL
        run.refresh_from_db()
        approval.refresh_from_db()
        assert (approval.status, run.status) == (ApprovalStatus.REJECTED, RunStatus.COMPLETED)
        assert approval.decision.reviewer_name == "Sue"
        assert LEDGER.payments == []
        result = next(m["content"] for m in run.messages if m.get("callId") == "p")
        assert result["status"] == "rejected"

    def test_the_same_reviewer_cannot_approve_twice_even_at_once_in_the_database(self):
        """The decision rights refuse it, and beneath them the database would too."""
        from django.db import IntegrityError, transaction

        two_person_rule()
        sam = reviewer("sam")
        _run, approval = waiting_payment()
        approve(approval, sam)
        first = Decision.objects.get(approval=approval)
        with pytest.raises(IntegrityError), transaction.atomic():
            Decision.objects.create(
                approval=approval,
                tenant=first.tenant,
                sequence=first.sequence + 1,
                previous_hash=first.hash,
                hash="-",
                decision="approve",
                reviewer=first.reviewer,
                reviewer_name="Sam",
                decided_at=first.decided_at,
            )

    def test_a_call_that_needs_two_approvals_is_not_edited(self):
        two_person_rule()
        _run, approval = waiting_payment()
        with pytest.raises(ApprovalInputError, match="needs 2 approvals of the same call"):
            approve(approval, reviewer("sam"), arguments={"amountCents": 400, "to": "bob"})
        assert not Decision.objects.exists()

    def test_an_edit_that_would_need_two_approvals_is_refused(self):
        two_person_rule(name="big ones need two", condition="/amountCents > 10000")
        _run, approval = waiting_payment()  # 500 cents: the agent's own ask, one approval
        assert approval.required_approvals == 1
        with pytest.raises(DecisionForbiddenError, match="the edited call needs 2 approvals"):
            approve(approval, reviewer("sam"), arguments={"amountCents": 50_000, "to": "bob"})
        assert not Decision.objects.exists()


class TestARaisedRoleSupersedesApprovalsBelowIt:
    """Escalation that raises the required role: approvals already given below the new role stop
    counting (they stay in the record, marked superseded), and every surface says how many are
    still needed."""

    def test_one_standard_approval_and_one_admin_are_not_two_admins(self):
        from django.utils import timezone

        from approvals.escalation import escalate_due_approvals
        from runs.timeline import bars_of

        two_person_rule(escalation=[{"afterSeconds": 15, "raiseRole": "admin"}])
        sam = reviewer("sam")
        ann, bob = reviewer("ann", role="admin"), reviewer("bob", role="admin")
        run, approval = waiting_payment()
        assert approve(approval, sam).kind == CompletionKind.PARTIAL

        assert escalate_due_approvals(now=approval.created_at + timedelta(seconds=16)).done == [
            f"{approval.pk} step 1"
        ]
        approval.refresh_from_db()
        assert (approval.required_role, approval.status, approval.approvals_missing) == (
            "admin",
            "pending",
            2,
        )
        [sams] = approval.approvals_given
        assert (sams["reviewer"], sams["superseded"]) == ("Sam", True)
        assert sams["supersededReason"] == "the required role rose to admin (escalation step 1)"
        escalated = run.journal.get(kind="approval.escalated").payload
        assert escalated["superseded"] == [{"userId": sam.pk, "reviewer": "Sam", "role": "standard"}]
        assert escalated["approvalsMissing"] == 2
        labels = [
            bar.label for bar in bars_of(run.journal.order_by("sequence"), now=timezone.now(), live=True)
        ]
        assert "escalated: needs admin; no longer counts: approval by Sam" in labels

        # One admin alone does not complete it: Sam's approval no longer counts.
        first = approve(approval, ann)
        assert (first.kind, first.waitpoint_resolved) == (CompletionKind.PARTIAL, False)
        run.refresh_from_db()
        approval.refresh_from_db()
        assert (run.status, approval.status, approval.approvals_missing) == (
            RunStatus.SUSPENDED,
            "pending",
            1,
        )
        assert LEDGER.payments == []
        with pytest.raises(
            DecisionForbiddenError, match=r"no longer counts: the role rose to admin \(1 of 2"
        ):
            approve(approval, sam)

        got = client_for(bob).get(f"/api/v1/approvals/{approval.pk}").json()
        assert (got["requiredRole"], got["requiredApprovals"], got["approvalsMissing"]) == ("admin", 2, 1)
        assert [(given["reviewer"], given["superseded"]) for given in got["approvalsGiven"]] == [
            ("Sam", True),
            ("Ann", False),
        ]
        assert (
            got["approvalsGiven"][0]["supersededReason"]
            == "the required role rose to admin (escalation step 1)"
        )
        assert got["approvalsGiven"][1]["supersededReason"] is None
        browser = Client()
        browser.force_login(bob)
        page = browser.get(f"/console/approvals/{approval.pk}/").text
        assert (
            "1 of 2 approvals still needed</span>; "
            "an earlier approval by Sam no longer counts: the role rose to admin"
        ) in page
        assert "Approved by Sam (standard): <strong>no longer counts</strong>" in page
        assert "1 of 2 approvals" in browser.get("/console/queue/").text

        second = approve(approval, bob)
        assert (second.kind, second.waitpoint_resolved) == (CompletionKind.TERMINAL, True)
        run.refresh_from_db()
        approval.refresh_from_db()
        assert (run.status, approval.status, approval.approvals_missing) == (
            RunStatus.COMPLETED,
            "approved",
            0,
        )
        assert LEDGER.payments == [(500, "bob")]
        assert [(given["reviewer"], bool(given.get("superseded"))) for given in approval.approvals_given] == [
            ("Sam", True),
            ("Ann", False),
            ("Bob", False),
        ]
        # The approvals that let it run are the admins'.
        resumed = run.journal.get(kind="wait.resumed").payload["resolution"]
        assert (resumed["reviewer"], resumed["reviewers"]) == ("Ann and Bob", ["Ann", "Bob"])
        assert client_for(bob).get(f"/api/v1/approvals/{approval.pk}").json()["approvalsMissing"] == 0

    def test_approvals_given_in_the_new_role_or_higher_still_count(self):
        from approvals.escalation import escalate_due_approvals

        two_person_rule(escalation=[{"afterSeconds": 15, "raiseRole": "senior"}])
        ann, sue = reviewer("ann", role="admin"), reviewer("sue", role="senior")
        run, approval = waiting_payment()
        approve(approval, ann)
        escalate_due_approvals(now=approval.created_at + timedelta(seconds=16))
        approval.refresh_from_db()
        assert (approval.required_role, approval.approvals_missing) == ("senior", 1)
        assert "superseded" not in approval.approvals_given[0]
        assert "superseded" not in run.journal.get(kind="approval.escalated").payload
        assert approve(approval, sue).kind == CompletionKind.TERMINAL


class TestSurfaces:
    def test_the_api_and_the_console_say_1_of_2(self):
        two_person_rule()
        sam, sue = reviewer("sam"), reviewer("sue")
        run, approval = waiting_payment()
        answer_ = client_for(sam).post(
            f"/api/v1/approvals/{approval.pk}/complete", {"decision": "approve"}, format="json"
        )
        assert answer_.status_code == 200, answer_.content
        body = answer_.json()
        assert (body["kind"], body["waitpointResolved"]) == ("partial", False)
        assert body["approval"]["status"] == "pending"
        assert body["approval"]["decision"] is None
        assert body["approval"]["requiredApprovals"] == 2
        assert [given["reviewer"] for given in body["approval"]["approvalsGiven"]] == ["Sam"]
        given = body["approval"]["approvalsGiven"][0]
        assert given["reviewerRoleAtDecision"] == "standard"
        assert given["decidedAt"] == body["decision"]["decidedAt"]  # Sam's decision, the same time
        again = client_for(sam).post(
            f"/api/v1/approvals/{approval.pk}/complete", {"decision": "approve"}, format="json"
        )
        assert again.status_code == 403
        assert "you already approved this" in again.json()["error"]["message"]

        browser = Client()
        browser.force_login(sue)
        assert "1 of 2 approvals" in browser.get("/console/queue/").text
        page = browser.get(f"/console/approvals/{approval.pk}/").text
        assert "1 of 2 approvals" in page
        assert "Approved by Sam (standard)" in page
        assert 'id="approve"' in page
        sams = Client()
        sams.force_login(sam)
        assert (
            "You can't decide this: you already approved this"
            in sams.get(f"/console/approvals/{approval.pk}/").text
        )

        decided = browser.post(f"/console/approvals/{approval.pk}/", {"decision": "approve"})
        assert decided.status_code == 302
        got = client_for(sue).get(f"/api/v1/approvals/{approval.pk}").json()
        assert got["status"] == "approved"
        assert got["decision"]["reviewer"] == "Sue"
        assert [given["reviewer"] for given in got["approvalsGiven"]] == ["Sam", "Sue"]
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED

    def test_rules_say_how_many_and_not_more_than_they_name(self):
        sam = reviewer("sam")
        api = client_for(reviewer("boss", role="admin"))
        from tenants.models import Membership

        Membership.objects.filter(user__username="boss").update(is_tenant_admin=True)
        for body, field in [
            ({"requiredApprovals": 0}, "a whole number from 1 to 5"),
            ({"requiredApprovals": 6}, "a whole number from 1 to 5"),
            ({"requiredApprovals": 2, "reviewers": ["sam"]}, "2 approvals from distinct reviewers, but"),
        ]:
            refused = api.post(
                "/api/v1/approval-rules",
                {"name": "two", "gate": "always_ask", "toolPattern": "probe.pay"} | body,
                format="json",
            )
            assert refused.status_code == 400, refused.content
            assert field in refused.content.decode()
        made = api.post(
            "/api/v1/approval-rules",
            {"name": "two", "gate": "always_ask", "toolPattern": "probe.pay", "requiredApprovals": 2},
            format="json",
        )
        assert made.status_code == 201, made.content
        assert made.json()["requiredApprovals"] == 2
        # Naming one reviewer later, on a rule that needs two, is refused too.
        named = api.patch(
            f"/api/v1/approval-rules/{made.json()['id']}", {"reviewers": ["sam"]}, format="json"
        )
        assert named.status_code == 400
        assert Approval.objects.count() == 0
        del sam
