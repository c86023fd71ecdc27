"""A queue fit to carry Kindgi's runs, certified per backend (django-tasks-db, RQ, Celery), each
with real worker processes started as an operator starts them (`kindgi worker --backend …`,
`kindgi sweeper`), real Redis and PostgreSQL:

- gated runs across two web processes and two workers, each tool call made once;
- every task delivered twice, while two workers race for them: still each call once;
- a worker killed mid-call: the run taken over from its journal, the call not silently repeated;
- a task lost between the commit and the queue: given again by the sweeps;
- the sweeps in two processes: each approval expired once, each schedule's tick one run.
"""

import time
from datetime import timedelta

import httpx
import pytest
from django.tasks import task_backends
from django.utils import timezone

from approvals.actions.decisions import check_complete_approval
from approvals.models import Approval, ApprovalStatus, Decision
from runs.actions import check_start_run, recover_stuck_runs
from runs.models import JournalEntry, Run, RunStatus, Schedule, Trigger
from runs.schedules import check_save_schedule
from runs.tasks import execute_run
from tenants.tokens import do_create_token
from tests.factories import default_tenant, member, principal, reviewer
from tests.live_server import LiveServer

from .conftest import LEASE_SECONDS, PACKS, wait_for

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
RUNS = 20


def _statuses(run_ids) -> dict[str, int]:
    counted: dict[str, int] = {}
    for status in Run.objects.filter(pk__in=run_ids).values_list("status", flat=True):
        counted[status] = counted.get(status, 0) + 1
    return counted


def test_gated_runs_across_two_web_processes_and_two_workers(queue, tmp_path):
    ada = reviewer("ada", role="admin")
    headers = {"Authorization": f"Bearer {do_create_token(user=ada)[1]}"}
    tallies = tmp_path / "tallies.txt"
    logs = [tmp_path / "worker-1.log", tmp_path / "worker-2.log"]
    for log in logs:
        queue.worker(log)
    environment = queue.environment | {"KINDGI_PACKS": PACKS}
    with (
        LiveServer(environment) as first,
        LiveServer(environment) as second,
        httpx.Client(headers=headers, timeout=30) as http,
    ):
        run_ids = []
        for _ in range(RUNS):
            started = http.post(
                f"{first.url}/api/v1/runs",
                json={"agentId": "probe.tallier", "input": {"userMessage": str(tallies)}},
            )
            assert started.status_code == 201, started.text
            # A queue backend never executes a run in the web process: it is queued for a worker.
            assert started.json()["status"] == "queued"
            run_ids.append(started.json()["id"])
        wait_for(
            lambda: _statuses(run_ids) == {RunStatus.SUSPENDED: RUNS},
            seconds=120,
            what="the workers to take every run to its approval",
            logs=logs,
        )
        assert not tallies.exists()  # nothing ran before its approval
        for approval in Approval.objects.filter(run_id__in=run_ids):
            decided = http.post(
                f"{second.url}/api/v1/approvals/{approval.pk}/complete", json={"decision": "approve"}
            )
            assert decided.status_code == 200, decided.text
        wait_for(
            lambda: _statuses(run_ids) == {RunStatus.COMPLETED: RUNS},
            seconds=120,
            what="the workers to complete every run",
            logs=logs,
        )
    assert sorted(tallies.read_text().splitlines()) == sorted(run_ids)  # each call once
    # Both workers took part.
    for log in logs:
        assert any(run_id in log.read_text() for run_id in run_ids), log.read_text()[-2000:]


def test_every_task_delivered_twice_still_makes_each_call_once(queue, tmp_path):
    """At-least-once delivery, which RQ and Celery give when a worker dies or a message is
    redelivered: every run's task is given again, and two workers race for the two copies."""
    rita = reviewer("rita", role="admin")
    tallies = tmp_path / "tallies.txt"
    runs = [
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="probe.tallier",
            input={"userMessage": str(tallies)},
        )
        for _ in range(RUNS)
    ]
    run_ids = [str(run.pk) for run in runs]
    for run_id in run_ids:
        execute_run.enqueue(run_id)  # the second copy of each start
    logs = [tmp_path / "worker-1.log", tmp_path / "worker-2.log"]
    for log in logs:
        queue.worker(log)
    wait_for(
        lambda: _statuses(run_ids) == {RunStatus.SUSPENDED: RUNS},
        seconds=120,
        what="every run at its approval",
        logs=logs,
    )
    for approval in Approval.objects.filter(run_id__in=run_ids):
        check_complete_approval(approval_id=approval.pk, acting_user=rita, decision="approve")
        execute_run.enqueue(str(approval.run_id))  # the second copy of each resumption
    wait_for(
        lambda: _statuses(run_ids) == {RunStatus.COMPLETED: RUNS},
        seconds=120,
        what="every run completed",
        logs=logs,
    )
    time.sleep(1)  # the last copies taken too: they find their runs finished
    assert sorted(tallies.read_text().splitlines()) == sorted(run_ids)
    for run in Run.objects.filter(pk__in=run_ids):
        assert run.journal.filter(kind="tool.completed").count() == 1
        assert run.journal.filter(kind="run.completed").count() == 1


def _has_a_line(file) -> bool:
    return file.exists() and file.read_text().endswith("\n")


def _kill_mid_call(queue, tmp_path, flow_id: str) -> tuple[Run, list[str]]:
    side_effects = tmp_path / "effects.txt"
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id=flow_id,
        input={"path": str(side_effects), "pause_ms": 60_000},
    )
    first_log = tmp_path / "worker-1.log"
    first = queue.worker(first_log)
    wait_for(lambda: _has_a_line(side_effects), seconds=60, what="the tool's side effect", logs=[first_log])
    queue.kill(first)
    time.sleep(LEASE_SECONDS + 0.5)
    assert recover_stuck_runs().done == [run.pk]
    second_log = tmp_path / "worker-2.log"
    queue.worker(second_log)
    wait_for(
        lambda: Run.objects.get(pk=run.pk).status in (RunStatus.SUSPENDED, RunStatus.COMPLETED),
        seconds=120,
        what="the second worker to take the run over",
        logs=[first_log, second_log],
    )
    run.refresh_from_db()
    return run, side_effects.read_text().splitlines()


def test_a_worker_killed_mid_call_leaves_a_call_that_is_not_idempotent_to_a_person(queue, tmp_path):
    run, lines = _kill_mid_call(queue, tmp_path, "probe.append")
    assert run.status == RunStatus.SUSPENDED
    approval = run.approvals.get()
    assert (approval.subject_kind, approval.title) == (
        "tool-call:interrupted",
        "Interrupted call: probe.slow-append",
    )
    assert len(lines) == 1  # not repeated


def test_a_worker_killed_mid_call_repeats_an_idempotent_call_with_the_same_key(queue, tmp_path):
    run, lines = _kill_mid_call(queue, tmp_path, "probe.append-idempotent")
    assert run.status == RunStatus.COMPLETED
    assert lines == [f"{run.pk}:append"] * 2
    assert run.output == {"lines": 2}


def test_a_task_lost_on_its_way_to_the_queue_is_given_again_by_the_sweeps(queue, tmp_path, monkeypatch):
    """Redis did not answer, or the process died, after the run was written and before its task
    was given: the run stays queued until the sweeps give the task again. A database queue takes
    the task in the transaction that writes the run, so there the sweeps give none twice."""
    tallies = tmp_path / "tallies.txt"
    backend = type(task_backends[execute_run.backend])
    if queue.name != "db":
        monkeypatch.setattr(backend, "enqueue", lambda *args, **kwargs: None)  # lost on the way
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="probe.tallier",
        input={"userMessage": str(tallies)},
    )
    monkeypatch.undo()
    assert recover_stuck_runs().done == []  # not yet: it may be waiting its turn
    Run.objects.filter(pk=run.pk).update(updated_at=timezone.now() - timedelta(seconds=LEASE_SECONDS + 1))
    if queue.name == "db":
        assert recover_stuck_runs().done == []
    else:
        assert recover_stuck_runs().done == [run.pk]
        assert recover_stuck_runs().done == []  # once a lease, not every round
    log = tmp_path / "worker.log"
    queue.worker(log)
    wait_for(
        lambda: Run.objects.get(pk=run.pk).status == RunStatus.SUSPENDED,
        seconds=60,
        what="a worker to take the run",
        logs=[log],
    )


APPROVALS = 20
SCHEDULES = 3


def test_two_sweepers_expire_each_approval_once_and_start_each_tick_once(queue, tmp_path):
    for _ in range(APPROVALS):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="acme-ops.status-agent",
            input={"userMessage": "Up."},
        )
    logs = [tmp_path / "worker.log", tmp_path / "sweeper-1.log", tmp_path / "sweeper-2.log"]
    queue.worker(logs[0])
    wait_for(
        lambda: Approval.objects.filter(status=ApprovalStatus.PENDING).count() == APPROVALS,
        seconds=120,
        what="every run at its approval",
        logs=logs,
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
    for log in logs[1:]:
        queue.sweeper(log, KINDGI_SWEEP_SECONDS="1")
    wait_for(
        lambda: (
            not Approval.objects.filter(status=ApprovalStatus.PENDING).exists()
            and Run.objects.filter(trigger=Trigger.SCHEDULE, status=RunStatus.COMPLETED).count() >= SCHEDULES
            and not Run.objects.exclude(status=RunStatus.COMPLETED).exists()
        ),
        seconds=120,
        what="the sweeps and the runs they start",
        logs=logs,
    )
    time.sleep(2)  # rounds after the last: nothing is expired or started again
    assert Approval.objects.filter(status=ApprovalStatus.EXPIRED).count() == APPROVALS
    assert Decision.objects.count() == APPROVALS
    scheduled = Run.objects.filter(trigger=Trigger.SCHEDULE)
    assert scheduled.count() == SCHEDULES
    assert sorted(Schedule.objects.values_list("last_run_id", flat=True)) == sorted(
        scheduled.values_list("pk", flat=True)
    )
    assert all(run.output["status"] == "shipped" for run in scheduled)


def test_a_resumed_run_is_taken_before_runs_not_started_yet(queue, tmp_path):
    """A reviewer who has let a call go should not wait behind a queue of new runs: the database
    queue gives resumed runs a higher priority, RQ (which has none) a queue its workers look at
    first. Celery over Redis takes its queues in turn, so there only the outcome is certified."""
    rita = reviewer("rita", role="admin")
    tallies = tmp_path / "tallies.txt"

    def tally_run():
        return check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="probe.tallier",
            input={"userMessage": str(tallies)},
        )

    first = tally_run()
    log = tmp_path / "worker-1.log"
    worker = queue.worker(log)
    wait_for(
        lambda: Run.objects.get(pk=first.pk).status == RunStatus.SUSPENDED,
        seconds=60,
        what="the first run to wait",
        logs=[log],
    )
    queue.stop(worker)
    waiting = [tally_run() for _ in range(RUNS)]  # queued, with no worker to take them
    check_complete_approval(approval_id=first.approvals.get().pk, acting_user=rita, decision="approve")
    log = tmp_path / "worker-2.log"
    queue.worker(log)
    everyone = [first.pk, *(run.pk for run in waiting)]
    wait_for(
        lambda: (
            Run.objects.filter(pk__in=everyone, status__in=[RunStatus.COMPLETED, RunStatus.SUSPENDED]).count()
            == len(everyone)
        ),
        seconds=120,
        what="the worker to take every run",
        logs=[log],
    )
    assert Run.objects.get(pk=first.pk).status == RunStatus.COMPLETED
    if queue.name == "celery":
        return
    called = first.journal.get(kind="tool.called").created_at
    new_runs_started = JournalEntry.objects.filter(run__in=waiting, kind="run.started").order_by("created_at")
    assert called < new_runs_started.first().created_at
