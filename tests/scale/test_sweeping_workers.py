"""Two `kindgi worker` processes on PostgreSQL, each with its own sweeper: every overdue approval
is expired once, every due schedule tick starts one run, and the workers carry the runs on."""

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from approvals.models import Approval, ApprovalStatus, Decision
from runs.actions import check_start_run
from runs.models import Run, RunStatus, Schedule, Trigger
from runs.schedules import check_save_schedule
from tests.factories import default_tenant, member, principal
from tests.live_server import database_env, free_port
from tests.runs.test_sweeper import the_sweeper_goes_round
from tests.scale.test_many_processes import start_worker, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
APPROVALS = 20
SCHEDULES = 3


def test_two_workers_expire_each_approval_once_and_start_each_tick_once(tmp_path):
    assert connection.vendor == "postgresql"
    for _ in range(APPROVALS):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="acme-ops.status-agent",
            input={"userMessage": "Up."},
        )
    Approval.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    ada = member("ada")
    for number in range(SCHEDULES):
        check_save_schedule(
            tenant=default_tenant(),
            fields={
                "name": f"check {number}",
                "flow_key": "my-pack.check-order",
                "input": {"orderId": "ord_1001"},
                "cron": "0 3 * * *",
                "owner": ada,
            },
            acting_user=None,
            surface="system",
        )
    Schedule.objects.update(next_run_at=timezone.now() - timedelta(seconds=1))
    environment = database_env(connection) | {
        "KINDGI_TASKS": "db",
        "KINDGI_PACKS": "packs.my_pack,packs.acme_ops",
        "KINDGI_SWEEP_SECONDS": "1",
    }
    workers = [start_worker(environment, tmp_path / f"worker-{n}.log", free_port()) for n in range(2)]
    try:
        wait_for(
            lambda: (
                not Approval.objects.filter(status=ApprovalStatus.PENDING).exists()
                and Run.objects.filter(trigger=Trigger.SCHEDULE, status=RunStatus.COMPLETED).count()
                >= SCHEDULES
                and not Run.objects.exclude(status=RunStatus.COMPLETED).exists()
            ),
            seconds=90,
            what="the workers' sweeps and runs",
        )
        with the_sweeper_goes_round():
            time.sleep(3)  # rounds after the last: nothing is expired or started again
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(timeout=30)
    assert Approval.objects.filter(status=ApprovalStatus.EXPIRED).count() == APPROVALS
    assert Decision.objects.count() == APPROVALS
    for approval in Approval.objects.all():
        assert list(Decision.objects.filter(approval=approval)) == [approval.decision]
    scheduled = Run.objects.filter(trigger=Trigger.SCHEDULE)
    assert scheduled.count() == SCHEDULES
    assert sorted(Schedule.objects.values_list("last_run_id", flat=True)) == sorted(
        scheduled.values_list("pk", flat=True)
    )
    assert all(run.output["status"] == "shipped" for run in scheduled)
