"""The chaos run's judgement (make chaos itself is never part of make test): a call that ran
twice, an approval lost, a socket that missed an event or a run left open is not healthy."""

import pytest

from bench.chaos import Tally, account, healthy
from runs.actions import check_start_run
from runs.models import JournalEntry
from tests.factories import default_tenant, principal

pytestmark = pytest.mark.django_db(transaction=True)


def waiting_run():
    return check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )


def test_a_clean_run_is_healthy(tmp_path):
    run = waiting_run()
    run.approvals.update(status="approved")
    run.__class__.objects.filter(pk=run.pk).update(status="completed")
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("key-1 101\nkey-2 102\n")
    tally = Tally(started=[str(run.pk)], socket_missed={str(run.pk): []})
    figures = account(tally=tally, ledger=ledger)
    assert figures["toolCalls"] == {"keys": 2, "exactlyOnce": 2, "moreThanOnce": 0, "heldForReview": 0}
    assert (figures["approvalsLost"], figures["runs"]["completed"]) == (0, 1)
    assert healthy(figures)


def test_what_makes_a_run_unhealthy(tmp_path):
    run = waiting_run()
    ledger = tmp_path / "ledger.txt"
    ledger.write_text("key-1 101\nkey-1 102\n")  # one call, executed twice
    wait = JournalEntry.objects.get(run=run, kind="wait.suspended")
    wait.payload["waitpoint"]["approvalId"] = "00000000-0000-4000-8000-000000000000"  # no such approval
    wait.save()
    tally = Tally(started=[str(run.pk)], socket_missed={str(run.pk): [3]})
    figures = account(tally=tally, ledger=ledger)
    assert figures["toolCalls"]["moreThanOnce"] == 1
    assert figures["approvalsLost"] == 1
    assert figures["sockets"]["missedAnEventAfterReconnecting"] == 1
    assert figures["runs"]["unfinished"] == 1
    assert not healthy(figures)
