"""A rule's budget holds a total across calls: a call that would take its scope over it takes
the budget's ``overBudget`` gate instead. Charged as the call passes the gate, under a lock on
the budget's scope; released if the call then does not run."""

import threading
from datetime import timedelta

import pytest
from django.db import connections
from django.test import Client
from django.utils import timezone

from approvals.actions.rules import check_save_rule
from approvals.exceptions import ApprovalInputError
from approvals.models import ApprovalRule
from runs.actions import check_start_run
from runs.executor import execute
from runs.models import BudgetCharge, RunStatus
from tests.api.conftest import client_for
from tests.factories import default_tenant, principal, reviewer
from tests.pack_fixtures.probes import LEDGER, SCRIPT
from tests.runs.decide import decide
from tests.runs.helpers import answer, calls, start
from tests.runs.test_execution import stalled_run

pytestmark = pytest.mark.django_db(transaction=True)


def budget_rule(budget: dict, *, gate: str = "never_ask") -> ApprovalRule:
    return check_save_rule(
        tenant=default_tenant(),
        fields={"name": "payments", "tool_pattern": "probe.pay", "gate": gate, "budget": budget},
        acting_user=None,
        surface="system",
    )


def pay(call_id: str, amount: int, to: str = "bob"):
    return calls((call_id, "probe.pay", {"amountCents": amount, "to": to}))


RUN_BUDGET = {"scope": "run", "sumOf": "/amountCents", "maxSum": 100_000}


def test_fifty_calls_of_99_999_against_a_run_budget_of_100_000_the_second_asks():
    budget_rule(RUN_BUDGET)
    SCRIPT.replies = [pay(f"p{n}", 99_999) for n in range(1, 51)] + [answer("paid")]
    run = start("probe.spender", "pay bob 50 times")
    assert run.status == RunStatus.SUSPENDED
    assert run.waitpoint["callId"] == "p2"
    assert run.waitpoint["gate"]["reason"] == (
        'rule "payments" (never_ask); over budget: 99,999 of 100,000 used in this run; this call 99,999'
    )
    assert LEDGER.payments == [(99_999, "bob")]
    assert BudgetCharge.objects.count() == 1
    # The reviewer reads why it asks, in the API and on the approval's page.
    approval = run.approvals.get()
    ruth = reviewer("ruth", role="admin")
    shown = client_for(ruth).get(f"/api/v1/approvals/{approval.pk}").json()
    assert shown["reason"] == run.waitpoint["gate"]["reason"]
    page = Client()
    page.force_login(ruth)
    used = "99,999 of 100,000 used in this run; this call 99,999"
    assert used in page.get(f"/console/approvals/{approval.pk}/").text


def test_an_approved_call_over_budget_counts_and_a_rejected_one_releases_nothing():
    budget_rule(RUN_BUDGET)
    SCRIPT.replies = [pay("p1", 60_000), pay("p2", 60_000), pay("p3", 1), pay("p4", 1), answer("paid")]
    run = start("probe.spender", "pay bob")
    assert run.waitpoint["callId"] == "p2"

    run = decide(run, "p2", "approve")  # over budget, approved: it counts
    assert run.waitpoint["callId"] == "p3"
    assert "120,000 of 100,000 used in this run; this call 1" in run.waitpoint["gate"]["reason"]
    assert sorted(BudgetCharge.objects.values_list("call_id", flat=True)) == ["p1", "p2"]

    run = decide(run, "p3", "reject", rationale="enough")  # it charged nothing, so it frees nothing
    assert run.waitpoint["callId"] == "p4"
    assert sorted(BudgetCharge.objects.values_list("call_id", flat=True)) == ["p1", "p2"]
    assert LEDGER.payments == [(60_000, "bob"), (60_000, "bob")]


def test_a_call_refused_after_it_was_charged_stops_counting():
    budget_rule(RUN_BUDGET)
    SCRIPT.replies = [pay("p1", 60_000, to="mallory"), pay("p2", 60_000), answer("paid")]
    run = start("probe.spender", "pay mallory, then bob")
    assert run.status == RunStatus.COMPLETED, run.failure_message
    assert run.journal.get(kind="tool.refused").payload["callId"] == "p1"  # the guardrail's no
    assert LEDGER.payments == [(60_000, "bob")]
    assert list(BudgetCharge.objects.values_list("call_id", flat=True)) == ["p2"]


def test_a_charge_whose_call_never_ran_is_given_back_when_its_run_is_recovered():
    """A charge can outlive its call: the executor charged it, then died before it journaled
    the call (and the model's reply that named it, which is written with the next step). The
    execution that takes the run over gives such charges back; the calls it makes are gated
    and charged afresh."""
    rule = budget_rule({"scope": "agent", "maxCalls": 1})
    run = stalled_run(
        agent_key="probe.spender",
        claim_expires_in=timedelta(seconds=-1),
        journal=[("run.started", {"input": {"userMessage": "pay bob"}})],
    )
    BudgetCharge.objects.create(
        tenant=run.tenant, rule_id=rule.pk, scope_key="agent:probe.spender", run=run, call_id="lost"
    )
    SCRIPT.replies = [pay("p1", 5), answer("paid")]
    execute(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED, run.waitpoint
    assert LEDGER.payments == [(5, "bob")]
    assert list(BudgetCharge.objects.values_list("call_id", flat=True)) == ["p1"]


def test_a_budget_counting_calls_in_a_window_lets_calls_through_once_it_has_passed():
    budget_rule({"scope": "tenant", "windowSeconds": 3600, "maxCalls": 1, "overBudget": "deny"})
    SCRIPT.replies = [pay("p1", 5), answer("paid"), pay("p1", 5), answer("not paid")]
    assert start("probe.spender", "pay").status == RunStatus.COMPLETED
    denied = start("probe.spender", "pay again")
    refused = denied.journal.get(kind="tool.refused").payload
    assert refused["result"]["error"]["code"] == "TOOL_NOT_ALLOWED"
    assert (
        "over budget: 1 of 1 calls in this tenant in the last 3,600 s"
        in refused["result"]["error"]["message"]
    )

    BudgetCharge.objects.update(created_at=timezone.now() - timedelta(hours=2))
    SCRIPT.replies = [pay("p1", 5), answer("paid")]
    assert start("probe.spender", "and again").status == RunStatus.COMPLETED
    assert LEDGER.payments == [(5, "bob"), (5, "bob")]


def test_three_concurrent_payments_of_2_000_against_5_000_exactly_two_pass():
    budget_rule({"scope": "tenant", "sumOf": "/amountCents", "maxSum": 5_000})
    tenant, owner = default_tenant(), principal(default_tenant())
    together = threading.Barrier(3)
    runs, lock = [], threading.Lock()

    def pay_once():
        try:
            together.wait()
            run = check_start_run(
                tenant=tenant,
                principal=owner,
                flow_id="probe.pay-flow",
                input={"amountCents": 2_000, "to": "bob"},
            )
            with lock:
                runs.append(run.pk)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=pay_once) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    from runs.models import Run

    statuses = sorted(Run.objects.filter(pk__in=runs).values_list("status", flat=True))
    assert statuses == [RunStatus.COMPLETED, RunStatus.COMPLETED, RunStatus.SUSPENDED]
    assert BudgetCharge.objects.count() == 2
    assert sorted(LEDGER.payments) == [(2_000, "bob"), (2_000, "bob")]


@pytest.mark.parametrize(
    ("budget", "error"),
    [
        ({"scope": "run"}, "/budget: says how much"),
        ({"scope": "week", "maxCalls": 3}, "/budget: scope: one of run, conversation"),
        ({"scope": "run", "sumOf": "/amountCents"}, "/budget: sumOf and maxSum come together"),
        ({"scope": "run", "sumOf": "amountCents", "maxSum": 5}, "/budget: sumOf: a JSON pointer"),
        ({"scope": "run", "maxCalls": 0}, "/budget: maxCalls: a whole number from 1"),
        (
            {"scope": "run", "maxCalls": 2, "overBudget": "never_ask"},
            "/budget: overBudget: one of always_ask, deny",
        ),
        ({"scope": "run", "maxCalls": 2, "per": "day"}, "/budget: per: not known"),
    ],
)
def test_a_bad_budget_is_refused_naming_what_is_wrong(budget, error):
    with pytest.raises(ApprovalInputError) as refused:
        budget_rule(budget)
    assert str(refused.value).startswith(error), str(refused.value)
    assert not ApprovalRule.objects.exists()


def test_a_deny_rule_has_no_budget_and_a_budget_is_kept_with_its_defaults_said():
    with pytest.raises(ApprovalInputError, match="a deny rule refuses every call"):
        budget_rule({"scope": "run", "maxCalls": 2}, gate="deny")
    assert budget_rule({"scope": "run", "maxCalls": 2}).budget == {
        "scope": "run",
        "maxCalls": 2,
        "overBudget": "always_ask",
    }


def test_a_budget_costs_the_approval_cycle_one_statement_more_at_most_and_no_commit():
    """The suspend reads the budget's use; the approved call's charge is written with its intent."""
    from approvals.actions.decisions import check_complete_approval
    from bench.counting import counting

    ruth = reviewer("ruth", role="admin")

    def cycle() -> tuple:
        with counting() as suspend:
            run = check_start_run(
                tenant=default_tenant(),
                principal=principal(),
                agent_id="acme-ops.status-agent",
                input={"userMessage": "Up."},
            )
        approval = run.approvals.get()
        with counting() as resume:
            check_complete_approval(approval_id=approval.pk, acting_user=ruth, decision="approve")
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED
        return suspend, resume

    cycle()  # caches warm
    plain = cycle()
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "posts",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "budget": {"scope": "tenant", "maxCalls": 1},
        },
        acting_user=None,
        surface="system",
    )
    cycle()  # the rules compiled again
    budgeted = cycle()
    assert BudgetCharge.objects.count() == 2  # the second approved over its budget: it counts
    for before, after in zip(plain, budgeted, strict=True):
        assert after.commits == before.commits
        assert after.statements <= before.statements + 1
