"""What a worker takes from the database queue: the task django-tasks-db would take, claimed as
the library claims it (on PostgreSQL in one statement of Kindgi's own, so it must agree)."""

import threading
from datetime import timedelta

import pytest
from django.db import connection, transaction
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.models import DBTaskResult, get_date_max

from runs.worker import WakeableWorker

pytestmark = pytest.mark.django_db(transaction=True)


def queued(
    label: str, *, priority: int = 0, queue: str = "default", backend: str = "default", run_after=None
):
    return DBTaskResult.objects.create(
        args_kwargs={"args": [label], "kwargs": {}},
        priority=priority,
        task_path="runs.tasks.execute_run",
        queue_name=queue,
        backend_name=backend,
        run_after=run_after or get_date_max(),
    )


def worker(worker_id: str = "worker-1", *, queues=("default",), excluded=()) -> WakeableWorker:
    return WakeableWorker(
        queue_names=list(queues),
        interval=1,
        batch=True,
        backend_name="default",
        startup_delay=False,
        max_tasks=None,
        worker_id=worker_id,
        excluded_queue_names=list(excluded),
    )


def label(task: DBTaskResult | None) -> str | None:
    return task.args_kwargs["args"][0] if task is not None else None


def the_librarys_next(taker: WakeableWorker) -> DBTaskResult | None:
    with transaction.atomic():
        return taker._ready_tasks().get_locked()


def test_a_worker_takes_the_tasks_the_library_would_in_its_order_and_claims_them():
    now = timezone.now()
    queued("new, first")
    queued("resumed", priority=10)
    queued("new, second")
    queued("due a minute ago", run_after=now - timedelta(minutes=1))
    queued("due in an hour", run_after=now + timedelta(hours=1))
    queued("another queue's", queue="mail")
    queued("another backend's", backend="other")
    queued("low", priority=-5)
    taker = worker()
    taken = []
    while (expected := the_librarys_next(taker)) is not None:
        task, read = taker._take()
        assert read
        assert label(task) == label(expected)
        stored = DBTaskResult.objects.get(pk=task.pk)
        assert stored.status == task.status == TaskResultStatus.RUNNING
        assert stored.worker_ids == task.worker_ids == ["worker-1"]
        assert stored.started_at is not None
        assert stored.started_at == task.started_at
        taken.append(label(task))
    assert taker._take() == (None, True)
    assert taken == ["resumed", "due a minute ago", "new, first", "new, second", "low"]
    left = set(
        DBTaskResult.objects.filter(status=TaskResultStatus.READY).values_list(
            "args_kwargs__args__0", flat=True
        )
    )
    assert left == {"due in an hour", "another queue's", "another backend's"}


def test_a_worker_of_every_queue_but_some_takes_from_those_alone():
    queued("default's")
    queued("mail's", queue="mail", priority=5)
    queued("slow's", queue="slow", priority=9)
    taker = worker(queues=("*",), excluded=("slow",))
    assert [label(taker._take()[0]) for _ in range(3)] == ["mail's", "default's", None]


def test_a_task_taken_again_after_a_retry_keeps_its_earlier_workers():
    task = queued("retried")
    DBTaskResult.objects.filter(pk=task.pk).update(worker_ids=["worker-0"])
    taken, _ = worker()._take()
    assert DBTaskResult.objects.get(pk=taken.pk).worker_ids == ["worker-0", "worker-1"]


@pytest.mark.postgres
def test_a_task_another_worker_is_taking_is_passed_over_not_waited_for():
    queued("first", priority=10)
    queued("second")
    held, release = threading.Event(), threading.Event()

    def hold_the_first():
        try:
            with transaction.atomic():
                DBTaskResult.objects.select_for_update().get(priority=10)
                held.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_first)
    holder.start()
    try:
        assert held.wait(10)
        assert label(worker()._take()[0]) == "second"
    finally:
        release.set()
        holder.join()
    assert label(worker("worker-2")._take()[0]) == "first"
