"""The decision log is tamper-evident: each decision's hash covers its content and the decision
before it, per tenant, the tenant's head holds the last one, and verify_chains (verify_decisions,
its former name) names the first problem."""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from approvals.actions import check_complete_approval, expire_due_approvals
from approvals.chain import GENESIS, decision_hash
from approvals.models import Approval, Decision
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
