"""The one scheduler of periodic work: one holder of the sweep lease at a time, every registered
sweep each round, each bounded; and two sweeping processes on PostgreSQL never sweep the same
approval twice."""

import json
import os
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from approvals.models import Approval, ApprovalStatus, Decision
from runs import sweeper
from runs.actions import check_start_run
from runs.models import Run, RunStatus, SweepLease
from tests.factories import default_tenant, principal
from tests.live_server import ROOT, database_env

pytestmark = pytest.mark.django_db(transaction=True)


def overdue_approvals(count: int) -> list[Approval]:
    for _ in range(count):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="acme-ops.status-agent",
            input={"userMessage": "Up."},
        )
    Approval.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    return list(Approval.objects.all())


def _lease_expiry():
    return SweepLease.objects.get(name=sweeper.LEASE).expires_at


@contextmanager
def the_sweeper_goes_round(*, seconds: float = 15):
    """Around a wait in which nothing more should happen: fails unless the sweeper kept going round
    through it, since nothing happening proves nothing if the sweeper had stalled.

    Each round renews the sweep lease before it sweeps, so the lease's expiry moves on with every
    round. It must move during the wait (a round began), and once more after it: rounds follow one
    another, so every round that swept during the wait ran to its end."""
    opened = _lease_expiry()
    yield
    closed = _lease_expiry()
    assert closed > opened, "the sweeper did not go round while the test waited for nothing to happen"
    deadline = time.monotonic() + seconds
    while _lease_expiry() == closed:
        assert time.monotonic() < deadline, "the sweeper stalled while the test waited for nothing to happen"
        time.sleep(0.05)


def test_one_holder_at_a_time_until_its_lease_runs_out():
    now = timezone.now()
    assert sweeper.take_lease("a", seconds=30, now=now)
    assert not sweeper.take_lease("b", seconds=30, now=now)
    assert sweeper.take_lease("a", seconds=30, now=now + timedelta(seconds=20))  # renewed
    assert not sweeper.take_lease("b", seconds=30, now=now + timedelta(seconds=45))
    assert sweeper.take_lease("b", seconds=30, now=now + timedelta(seconds=51))  # a's ran out
    assert not sweeper.take_lease("a", seconds=30, now=now + timedelta(seconds=52))


def test_a_round_runs_every_sweep_bounded_and_only_for_the_holder(settings):
    settings.KINDGI_SWEEP_LIMIT = 2
    overdue_approvals(3)
    assert sweeper.sweep_once("other") is not None  # "other" holds the lease now
    assert sweeper.sweep_once("me") is None
    assert Approval.objects.filter(status=ApprovalStatus.EXPIRED).count() == 2
    done = sweeper.sweep_once("other")
    assert len(done["expire approvals"].done) == 1
    assert list(done) == [
        "recover runs",
        "start schedules",
        "forget idempotency keys",
        "escalate approvals",
        "expire approvals",
        "deliver webhooks",
        "remind reviewers",
        "mail notifications",
    ]
    assert Approval.objects.filter(status=ApprovalStatus.PENDING).count() == 0
    assert set(Run.objects.values_list("status", flat=True)) == {RunStatus.COMPLETED}


def test_a_sweep_that_breaks_leaves_the_others_to_run(monkeypatch):
    overdue_approvals(1)

    def broken(**kwargs):
        raise RuntimeError("the sweep broke")

    monkeypatch.setattr(
        sweeper, "_sweeps", {"broken": broken, "expire approvals": sweeper._sweeps["expire approvals"]}
    )
    done = sweeper.sweep_once("me")
    assert "broken" not in done
    assert len(done["expire approvals"].done) == 1


def _sweeping_process() -> subprocess.Popen:
    env = os.environ | database_env(connection) | {"KINDGI_PACKS": "packs.my_pack,packs.acme_ops"}
    return subprocess.Popen(
        [sys.executable, "manage.py", "run_sweeps", "--every", "0.05"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


@pytest.mark.postgres
def test_two_sweeping_processes_never_sweep_the_same_approval_twice(settings):
    assert connection.vendor == "postgresql"
    approvals = overdue_approvals(30)
    processes = [_sweeping_process(), _sweeping_process()]
    try:
        deadline = time.monotonic() + 60
        while Approval.objects.filter(status=ApprovalStatus.PENDING).exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        # The round that expired the last one reports once that approval's run has gone on.
        while Run.objects.exclude(status=RunStatus.COMPLETED).exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        with the_sweeper_goes_round():
            time.sleep(1)  # rounds after the last: nothing is swept again
    finally:
        for process in processes:
            process.terminate()
    swept, sweepers = [], 0
    for process in processes:
        out, _ = process.communicate(timeout=30)
        mine = [item for line in out.splitlines() for item in json.loads(line)["expire approvals"]["done"]]
        sweepers += bool(mine)
        swept += mine
    # The lease holder swept them all, round after round; the other waited its turn.
    assert sweepers == 1
    assert sorted(swept) == sorted(str(approval.pk) for approval in approvals)
    assert len(swept) == len(set(swept))
    assert Decision.objects.count() == 30
    assert not Approval.objects.filter(status=ApprovalStatus.PENDING).exists()
