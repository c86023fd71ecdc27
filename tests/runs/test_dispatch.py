"""Where a run executes is for what the task backend does to say: only a backend that runs a task
where it is enqueued (Django's immediate backend) executes runs in this process. Any other
(Django's dummy backend here, as a Redis queue would) is given the run for a worker, once the
change that queued it has committed, a resumed run ahead of new ones."""

import pytest
from django.db import transaction
from django.tasks import task_backends

from runs.models import Run, RunStatus
from runs.tasks import RESUME_PRIORITY, enqueue_run_on_commit, execute_run
from tests.factories import default_tenant

from .decide import decide
from .helpers import start

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def dummy_queue(settings):
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    yield task_backends["default"]
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}


def queued(backend) -> list[tuple[str, list, int]]:
    return [(result.task.name, result.args, result.task.priority) for result in backend.results]


def test_a_run_started_with_a_backend_that_does_not_run_tasks_here_waits_for_a_worker(dummy_queue):
    run = start("acme-ops.status-agent", "Checkout is back to normal.")
    assert run.status == RunStatus.QUEUED
    assert run.journal.count() == 0  # nothing executed it in this process
    assert queued(dummy_queue) == [(execute_run.name, [str(run.pk)], 0)]


def test_it_is_given_the_run_only_once_the_change_has_committed(dummy_queue):
    run = Run.objects.create(tenant=default_tenant(), flow_key="my-pack.check-order", flow_version="0.1.0")
    with transaction.atomic():
        enqueue_run_on_commit(run.pk)
        assert queued(dummy_queue) == []
    assert queued(dummy_queue) == [(execute_run.name, [str(run.pk)], 0)]

    def change_that_fails():
        with transaction.atomic():
            enqueue_run_on_commit(run.pk)
            raise RuntimeError("the change fails")

    with pytest.raises(RuntimeError):
        change_that_fails()
    assert len(dummy_queue.results) == 1  # a change that failed queued nothing


def test_a_decided_run_is_queued_ahead_of_new_ones_not_resumed_here(settings):
    run = start("acme-ops.status-agent", "Checkout is back to normal.")
    assert run.status == RunStatus.SUSPENDED
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.dummy.DummyBackend"}}
    try:
        run = decide(run, "call_post_update")
        assert run.status == RunStatus.QUEUED
        assert not run.journal.filter(kind="tool.completed").exists()
        assert queued(task_backends["default"]) == [(execute_run.name, [str(run.pk)], RESUME_PRIORITY)]
    finally:
        settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
