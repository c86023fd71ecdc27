"""The decision log is tamper-evident: each decision's hash covers its content and the decision
before it, per tenant, the tenant's head holds the last one, and verify_chains (verify_decisions,
its former name) names the first problem."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from approvals.actions.approvals import expire_due_approvals
from approvals.actions.decisions import check_complete_approval
from approvals.actions.rules import check_save_rule
from approvals.chain import GENESIS, decision_hash
from approvals.models import Approval, Decision
from audit.models import AuditEntry, ChainHead
from runs.actions import check_start_run
from tests.factories import default_tenant, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def decided(n: int, *, tenant=None, user=None) -> list[Decision]:
    tenant = tenant or default_tenant()
    user = user or reviewer(f"rev-{tenant.slug}", tenant=tenant)
    for index in range(n):
        run = check_start_run(
            tenant=tenant,
            principal=principal(tenant),
            agent_id="acme-ops.status-agent",
            input={"userMessage": f"Up {index}."},
        )
        check_complete_approval(
            approval_id=run.approvals.get().pk, acting_user=user, decision="approve", rationale="ok"
        )
    return list(Decision.objects.filter(tenant=tenant).order_by("sequence"))


def verify(*arguments) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    call_command("verify_decisions", *arguments, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_each_decision_follows_the_one_before_it_in_its_tenant():
    acme = decided(3)
    globex = decided(1, tenant=other_tenant())
    assert [d.sequence for d in acme] == [1, 2, 3]
    assert acme[0].previous_hash == GENESIS
    assert [d.previous_hash for d in acme[1:]] == [d.hash for d in acme[:-1]]
    assert all(decision_hash(d) == d.hash for d in acme)
    assert (globex[0].sequence, globex[0].previous_hash) == (1, GENESIS)  # a chain of its own
    out, err = verify()
    assert f"acme: the chains hold; heads: audit #0 {GENESIS}, decisions #3 {acme[-1].hash}" in out
    assert f"globex: the chains hold; heads: audit #0 {GENESIS}, decisions #1 {globex[0].hash}" in out
    assert err == ""


def test_an_expiry_is_in_the_chain_too():
    from datetime import timedelta

    from django.utils import timezone

    decided(1)
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Later."},
    )
    Approval.objects.filter(run=run).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert len(expire_due_approvals().done) == 1
    last = Decision.objects.get(approval__run=run)
    assert (last.sequence, last.rationale) == (2, "expired")
    verify()


@pytest.mark.parametrize(
    ("tamper", "reason"),
    [
        (
            "UPDATE approvals_decision SET rationale = 'rubber stamp' WHERE id = %s",
            "its hash does not match its content",
        ),
        (
            "UPDATE approvals_decision SET decision = 'reject' WHERE id = %s",
            "its hash does not match its content",
        ),
        (
            # The approval points at the decision that settled it: that goes first.
            "UPDATE approvals_approval SET decision_id = NULL WHERE decision_id = %s; "
            "DELETE FROM approvals_decision WHERE id = %s",
            "it is #3 where #2 should be: one is missing",
        ),
    ],
    ids=["rationale changed", "decision changed", "decision removed"],
)
def test_a_decision_changed_behind_the_orms_back_is_named(tamper, reason):
    decisions = decided(3)
    middle = decisions[1]
    with connection.cursor() as cursor:  # what someone with the database could do
        for statement in tamper.split("; "):
            cursor.execute(statement, [middle.pk])
    with pytest.raises(CommandError, match="do not hold"):
        verify()
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("verify_decisions", "--tenant", "acme", stdout=io.StringIO(), stderr=err)
    shown = decisions[2] if "DELETE" in tamper else middle
    assert f"acme: decision {shown.pk} (#{shown.sequence}): {reason}" in err.getvalue()


def tamper(*statements: tuple[str, list]) -> None:
    """What someone with the database could do, behind the application's back."""
    with connection.cursor() as cursor:
        for statement, params in statements:
            cursor.execute(statement, params)


def refused(*arguments) -> str:
    """verify_chains fails (manage.py exits 1): what it says."""
    err = io.StringIO()
    with pytest.raises(CommandError, match="do not hold; the first: acme: ") as failure:
        call_command("verify_chains", *arguments, stdout=io.StringIO(), stderr=err)
    return str(failure.value) + "\n" + err.getvalue()


def unsettle(*decision_ids) -> list[tuple[str, list]]:
    """Statements that delete decisions: their approvals point at them first."""
    marks = ", ".join(["%s"] * len(decision_ids))
    return [
        (
            f"UPDATE approvals_approval SET decision_id = NULL WHERE decision_id IN ({marks})",
            list(decision_ids),
        ),
        (f"DELETE FROM approvals_decision WHERE id IN ({marks})", list(decision_ids)),
    ]


class TestVerifyChains:
    def test_an_untouched_database_holds_and_the_heads_are_printed(self):
        decided(2)
        check_save_rule(
            tenant=default_tenant(), fields={"name": "a", "gate": "deny"}, acting_user=None, surface="system"
        )
        out = io.StringIO()
        call_command("verify_chains", stdout=out, stderr=io.StringIO())
        head = ChainHead.objects.get(tenant=default_tenant(), chain="audit")
        assert (
            f"acme: the chains hold; heads: audit #{head.sequence} {head.hash}, decisions #2 "
            in out.getvalue()
        )

    def test_the_newest_decision_removed_shows_against_the_head(self):
        decisions = decided(3)
        tamper(*unsettle(decisions[-1].pk))
        assert (
            "decisions: the head is #3 but the chain ends at #2: 1 decision removed from the end" in refused()
        )

    def test_all_decisions_removed_show_against_the_head(self):
        decisions = decided(2)
        tamper(*unsettle(*[d.pk for d in decisions]))
        assert "the head is #2 but the chain ends at #0: 2 decisions removed from the end" in refused()

    def test_a_decided_approval_without_its_decision_shows(self):
        """Removed from the end, and the head moved back to hide it: the approval still tells."""
        decisions = decided(2)
        last, before = decisions[-1], decisions[0]
        tamper(
            *unsettle(last.pk),
            ("UPDATE audit_chainhead SET sequence = 1, hash = %s WHERE chain = 'decisions'", [before.hash]),
        )
        assert f"approval {last.approval_id} is approved but has no decision: it was removed" in refused()

    def test_a_head_that_does_not_match_its_chain_shows(self):
        decided(1)
        tamper(("UPDATE audit_chainhead SET hash = %s WHERE chain = 'decisions'", ["sha256:" + "1" * 64]))
        assert "does not match the chain's end" in refused()

    def audit_entries(self, n: int) -> list[AuditEntry]:
        for index in range(n):
            check_save_rule(
                tenant=default_tenant(),
                fields={"name": f"r{index}", "gate": "deny"},
                acting_user=None,
                surface="system",
            )
        return list(AuditEntry.objects.filter(tenant=default_tenant()).order_by("sequence"))

    def test_an_audit_entry_removed_from_the_middle_shows(self):
        entries = self.audit_entries(3)
        tamper(("DELETE FROM audit_auditentry WHERE id = %s", [entries[1].pk]))
        assert f"audit entry {entries[2].pk} (#3): it is #3 where #2 should be: one is missing" in refused()

    def test_an_audit_entry_edited_shows(self):
        entries = self.audit_entries(2)
        tamper(("UPDATE audit_auditentry SET actor_name = 'someone else' WHERE id = %s", [entries[0].pk]))
        assert f"audit entry {entries[0].pk} (#1): its hash does not match its content" in refused(
            "--tenant", "acme"
        )

    def test_the_newest_audit_entry_removed_shows(self):
        entries = self.audit_entries(2)
        tamper(("DELETE FROM audit_auditentry WHERE id = %s", [entries[-1].pk]))
        assert (
            "audit: the head is #2 but the chain ends at #1: 1 audit entry removed from the end" in refused()
        )

    def test_verify_decisions_is_the_same_command(self):
        decisions = decided(2)
        tamper(*unsettle(decisions[-1].pk))
        with pytest.raises(CommandError, match="removed from the end"):
            call_command("verify_decisions", stdout=io.StringIO(), stderr=io.StringIO())
