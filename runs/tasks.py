"""Run execution as a task: immediate by default, a database queue with django-tasks-db."""

from uuid import UUID

from django.db import transaction
from django.tasks import task


@task()
def execute_run(run_id: str) -> None:
    """Execute or resume a run. Safe to deliver twice: the executor claims the run first."""
    from runs.engine.executor import execute

    execute(UUID(run_id))


def enqueue_run_on_commit(run_id: UUID) -> None:
    """Execute the run once the current transaction commits (at once, with the immediate backend)."""
    transaction.on_commit(lambda: execute_run.enqueue(str(run_id)))
