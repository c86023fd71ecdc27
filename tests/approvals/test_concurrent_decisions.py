"""Exactly-once decisions under real concurrency: 20 reviewers on PostgreSQL, at the same moment."""

import threading

import pytest
from django.db import connection, connections

from approvals.actions.decisions import check_complete_approval
from approvals.exceptions import ApprovalConflictError
from approvals.models import Decision
from packs.acme_ops.status_page import STATUS_PAGE
from runs.actions import check_start_run
from runs.models import RunStatus
from tests.factories import default_tenant, principal, reviewer

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_twenty_concurrent_decisions_one_wins_and_the_tool_runs_once():
    assert connection.vendor == "postgresql"
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )
    approval = run.approvals.get()
    deciders = [reviewer(f"reviewer-{index}") for index in range(20)]
    start_together = threading.Barrier(len(deciders))
    outcomes: list[str] = []
    lock = threading.Lock()

    def decide(user, index):
        try:
            start_together.wait()
            check_complete_approval(
                approval_id=approval.pk, acting_user=user, decision="approve", rationale=f"from {index}"
            )
            outcome = "decided"
        except ApprovalConflictError:
            outcome = "conflict"
        except Exception as error:  # anything else is a failure the assertion below shows
            outcome = repr(error)
        finally:
            connections.close_all()
        with lock:
            outcomes.append(outcome)

    threads = [threading.Thread(target=decide, args=(user, i)) for i, user in enumerate(deciders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(outcomes) == ["conflict"] * 19 + ["decided"]
    assert Decision.objects.filter(approval=approval).count() == 1
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert len(STATUS_PAGE.posts) == 1
    assert run.journal.filter(kind="tool.completed").count() == 1
    assert run.journal.filter(kind="wait.resumed").count() == 1


def test_decisions_of_one_tenant_taken_at_once_make_one_chain_without_a_fork():
    from approvals.chain import first_break

    runs = [
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="acme-ops.status-agent",
            input={"userMessage": f"Up {n}."},
        )
        for n in range(12)
    ]
    approvals = [run.approvals.get() for run in runs]
    deciders = [reviewer(f"reviewer-{index}") for index in range(len(approvals))]
    start_together = threading.Barrier(len(approvals))
    failures: list[str] = []

    def decide(user, approval):
        try:
            start_together.wait()
            check_complete_approval(approval_id=approval.pk, acting_user=user, decision="approve")
        except Exception as error:
            failures.append(repr(error))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=decide, args=pair) for pair in zip(deciders, approvals, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert failures == []
    chain = list(Decision.objects.filter(tenant=default_tenant()).order_by("sequence"))
    assert [decision.sequence for decision in chain] == list(range(1, 13))
    assert first_break(chain) is None
