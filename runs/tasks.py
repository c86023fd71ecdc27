"""Run execution as a task: immediate by default, a database queue with django-tasks-db.

The task imports the executor when it runs, not when this module loads: the executor records
through ``runs.journal``, which queues runs through this module, and this one lazy edge keeps
that from being an import circle.
"""

from collections.abc import Callable
from typing import Any
from uuid import UUID

from django.db import transaction
from django.tasks import task, task_backends
from django.tasks.backends.immediate import ImmediateBackend


@task()
def execute_run(run_id: str) -> None:
    """Execute or resume a run. Safe to deliver twice: the executor claims the run first."""
    from runs.executor import execute

    execute(UUID(run_id))


def _queue_is_in_the_database() -> bool:
    from django_tasks_db import DatabaseBackend

    return isinstance(task_backends[execute_run.backend], DatabaseBackend)


def runs_in_this_process() -> bool:
    """Whether a run queued now is executed in this process, as soon as its transaction commits,
    rather than by a worker: only when the backend itself runs a task where it is enqueued (the
    immediate backend). Any other (the database queue, Redis queues, Django's dummy backend)
    holds it for a worker."""
    return isinstance(task_backends[execute_run.backend], ImmediateBackend)


def execute_claimed_on_commit(claim, token: str, *, then: Callable[[Any], None]) -> None:
    """Execute a run made claimed by this process (``runs.journal.start_claimed``) once the
    transaction commits, handing ``then`` the run as it ends (or None). An error it lets out is
    logged, and the run is left to recovery, as a task's would be."""

    def execute_now() -> None:
        from runs.executor import execute_claimed

        then(execute_claimed(claim, token))

    transaction.on_commit(execute_now, robust=True)


# A run that stopped to wait and may now go on (a person decided, a child run ended) is taken
# from the queue before runs not started yet: its waiter is a person, or a run half done.
RESUME_PRIORITY = 10


def enqueue_run_on_commit(run_id: UUID, *, resumed: bool = False) -> None:
    """Have the run executed once the current transaction commits; ahead of new runs, in a
    database queue, if it is ``resumed`` from a wait.

    A database queue takes the task inside the transaction, so it commits with the change that
    asked for it (nothing is lost if the process dies right after). Any other backend is given
    the task once the change has committed: a worker that took it sooner would not find the run
    as the change leaves it. The immediate backend then runs it, inside the call that made the
    change.
    """
    backend = task_backends[execute_run.backend]
    first = resumed and backend.supports_priority
    queued = execute_run.using(priority=RESUME_PRIORITY) if first else execute_run
    if _queue_is_in_the_database():
        queued.enqueue(str(run_id))
    else:
        transaction.on_commit(lambda: queued.enqueue(str(run_id)))
