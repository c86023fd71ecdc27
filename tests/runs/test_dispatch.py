"""Where a run executes is decided in one place (``runs.dispatch``), by what the task backend
does: only a backend that runs a task where it is enqueued (Django's immediate backend) executes
runs in this process. Any other (Django's dummy backend here, as a Redis queue would) is given
the run for a worker, once the change that queued it has committed, a resumed run ahead of new
ones; and so is a run taken again from a dead executor, or a flow whose agent step ended."""

from datetime import timedelta

import pytest
from django.db import transaction
from django.tasks import task_backends
from django.utils import timezone

from runs import dispatch
from runs.actions import recover_stuck_runs
from runs.models import Run, RunStatus
from runs.tasks import execute_run
from tests.factories import default_tenant

from .decide import decide
from .helpers import start

pytestmark = pytest.mark.django_db(transaction=True)

IMMEDIATE = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
DUMMY = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}


@pytest.fixture
def dummy_queue(settings):
    settings.TASKS = DUMMY
    yield task_backends["default"]
    settings.TASKS = IMMEDIATE


def queued(backend) -> list[tuple[str, list, int]]:
    return [(result.task.name, result.args, result.task.priority) for result in backend.results]


def test_only_the_immediate_backend_executes_here(settings):
    assert dispatch.executes_here()
    settings.TASKS = DUMMY
    try:
        assert not dispatch.executes_here()
    finally:
        settings.TASKS = IMMEDIATE


def test_a_run_started_with_a_backend_that_does_not_run_tasks_here_waits_for_a_worker(dummy_queue):
    run = start("acme-ops.status-agent", "Checkout is back to normal.")
    assert run.status == RunStatus.QUEUED
    assert run.journal.count() == 0  # nothing executed it in this process
    assert queued(dummy_queue) == [(execute_run.name, [str(run.pk)], 0)]


def test_it_is_given_the_run_only_once_the_change_has_committed(dummy_queue):
    run = Run(tenant=default_tenant(), flow_key="my-pack.check-order", flow_version="0.1.0")
    with transaction.atomic():
        dispatch.start(run, then=print)
        assert queued(dummy_queue) == []
    assert queued(dummy_queue) == [(execute_run.name, [str(run.pk)], 0)]

    another = Run(tenant=default_tenant(), flow_key="my-pack.check-order", flow_version="0.1.0")

    def change_that_fails():
        with transaction.atomic():
            dispatch.start(another, then=print)
            raise RuntimeError("the change fails")

    with pytest.raises(RuntimeError):
        change_that_fails()
    assert len(dummy_queue.results) == 1  # a change that failed queued nothing
    assert not Run.objects.filter(pk=another.pk).exists()


def test_a_decided_run_is_queued_ahead_of_new_ones_not_resumed_here(settings):
    run = start("acme-ops.status-agent", "Checkout is back to normal.")
    assert run.status == RunStatus.SUSPENDED
    settings.TASKS = DUMMY
    try:
        run = decide(run, "call_post_update")
        assert run.status == RunStatus.QUEUED
        assert not run.journal.filter(kind="tool.completed").exists()
        assert queued(task_backends["default"]) == [
            (execute_run.name, [str(run.pk)], dispatch.RESUME_PRIORITY)
        ]
    finally:
        settings.TASKS = IMMEDIATE


def test_a_run_whose_executor_died_is_given_to_a_worker_again(dummy_queue):
    run = Run.objects.create(
        tenant=default_tenant(),
        flow_key="my-pack.check-order",
        flow_version="0.1.0",
        status=RunStatus.RUNNING,
        claim_token="dead",
        claim_expires_at=timezone.now() - timedelta(seconds=1),
    )
    assert recover_stuck_runs().done == [run.pk]
    assert queued(dummy_queue) == [(execute_run.name, [str(run.pk)], 0)]
    run.refresh_from_db()
    assert run.claim_token == "dead"  # the worker's task claims it, not the sweep
