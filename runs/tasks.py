"""Run execution as a task: immediate by default, a database queue with django-tasks-db.

The task imports the executor when it runs, not when this module loads: the executor records
through ``runs.journal``, which queues runs through this module, and this one lazy edge keeps
that from being an import circle.
"""

from uuid import UUID

from django.db import transaction
from django.tasks import task, task_backends


@task()
def execute_run(run_id: str) -> None:
    """Execute or resume a run. Safe to deliver twice: the executor claims the run first."""
    from runs.executor import execute

    execute(UUID(run_id))


def _queue_is_in_the_database() -> bool:
    from django_tasks_db import DatabaseBackend

    return isinstance(task_backends[execute_run.backend], DatabaseBackend)


def enqueue_run_on_commit(run_id: UUID) -> None:
    """Have the run executed once the current transaction commits.

    A database queue takes the task inside the transaction, so it commits with the change that
    asked for it (nothing is lost if the process dies right after). The immediate backend runs
    the task after the commit, inside the call that made the change.
    """
    if _queue_is_in_the_database():
        execute_run.enqueue(str(run_id))
    else:
        transaction.on_commit(lambda: execute_run.enqueue(str(run_id)))
