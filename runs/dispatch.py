"""Where a run goes on: executed in this process once the change commits, or queued for a worker.

The one place that decides it, for every caller: a run started (``start``), resumed from a
wait (``resume_locked``, whoever resolved it: a person's decision, a child run's end, a
connection made) or taken again from a dead executor (``requeue``). The decision is the
configured task backend's to make by what it does (``runs.tasks``): only a backend that runs a
task where it is enqueued (Django's immediate backend) has runs executed here, claimed as they
are written so that no second claim is needed; any other (``django-tasks-db``, a Redis queue,
Django's dummy backend) is given the run for a worker.

Executing is the one edge back up: ``runs.tasks`` imports the executor when a task runs, and
the executor resumes waiting runs through this module. That lazy edge (dispatch → tasks →
executor) is the only import circle of ``runs``; the journal below records and decides nothing.
"""

from collections.abc import Callable, Mapping
from typing import Any
from uuid import UUID, uuid4

from django.db import transaction
from django.tasks import task_backends
from django.tasks.backends.immediate import ImmediateBackend

from core.prepared import Param, Prepared
from core.rows import insert_rows
from runs import journal
from runs.engine.policy import PolicyContext
from runs.models import Run
from runs.tasks import execute_claimed, execute_run
from tenants.models import Tenant

# A run that stopped to wait and may now go on (a person decided, a child run ended) is taken
# from the queue before runs not started yet: its waiter is a person, or a run half done.
RESUME_PRIORITY = 10
# Where there are no priorities (RQ): the queue of resumed runs, which workers look at first.
RESUMED_QUEUE = "resumed"


def executes_here() -> bool:
    """Whether a run given to the backend now is executed in this process, as soon as its
    transaction commits, rather than by a worker."""
    return isinstance(task_backends[execute_run.backend], ImmediateBackend)


_CONFIG_VERSION = Prepared(
    lambda: (
        Tenant.objects.filter(pk=Param("tenant", Tenant._meta.pk)).order_by().values_list("config_version")
    )
)


def start(run: Run, *, then: Callable[[Run | None], None]) -> None:
    """Write the new ``run`` and have it executed once this transaction commits; ``then`` is
    handed the run as its execution here leaves it (None if its claim was lost), and is not
    called when a worker executes it. Precondition: inside the transaction that makes the run."""
    if not executes_here():
        insert_rows([run])
        _enqueue_on_commit(run.pk)
        return
    # Its gates are the tenant's configuration as it is now, whenever the caller read the tenant.
    (run.tenant.config_version,) = _CONFIG_VERSION.one_or_none(tenant=run.tenant_id)
    token = uuid4().hex
    claim = journal.start_claimed(run, token=token)
    _execute_on_commit(claim, token, then=then)


def resume_locked(
    run: Run, resolution: Mapping[str, Any], *, set_going: bool = True, context: PolicyContext | None = None
) -> Callable[[], None]:
    """Record what resolved the run's wait and have it go on: queued for a worker, or claimed
    now and executed in this process once the transaction commits.

    ``set_going`` False: the caller has more to write after this and on-commit work of its own
    to come before the execution (an approval's announcement); it calls the function returned
    once that is registered. Otherwise (and with a worker's queue) that function does nothing.
    ``context``: the run's policy context without connections, if the caller built it, for an
    execution here (a worker builds its own).

    Precondition: ``run`` is locked and suspended."""
    if not executes_here():
        journal.record_resumed(run, resolution)
        _enqueue_on_commit(run.pk, resumed=True)
        return _set_going_already
    token = uuid4().hex
    journal.record_resumed(run, resolution, claimed_by=token)

    def execute_on_commit() -> None:
        _execute_on_commit(journal.Claim(run, None, context), token, then=lambda finished: None)

    if not set_going:
        return execute_on_commit
    execute_on_commit()
    return _set_going_already


def _set_going_already() -> None:
    pass


def requeue(run_id: UUID) -> None:
    """Have a run whose executor died executed again, by whoever takes it first (the task claims
    it): by a worker, or here and now with the immediate backend."""
    execute_run.enqueue(str(run_id))


def _execute_on_commit(claim: journal.Claim, token: str, *, then: Callable[[Any], None]) -> None:
    """Execute a run this process holds the claim of once the transaction commits. An error it
    lets out is logged, and the run is left to recovery, as a task's would be."""

    def execute_now() -> None:
        then(execute_claimed(claim, token))

    transaction.on_commit(execute_now, robust=True)


def _enqueue_on_commit(run_id: UUID, *, resumed: bool = False) -> None:
    """Give the run to the backend, ahead of new runs if it is ``resumed`` from a wait and the
    backend orders by priority.

    A database queue takes the task inside the transaction, so it commits with the change that
    asked for it (nothing is lost if the process dies right after). Any other backend is given
    the task once the change has committed: a worker that took it sooner would not find the run
    as the change leaves it.
    """
    backend = task_backends[execute_run.backend]
    queued = _ahead_of_new_runs(backend) if resumed else execute_run
    if _queue_is_in_the_database(backend):
        queued.enqueue(str(run_id))
    else:
        # Robust: a Redis that does not answer fails neither the change, which has committed,
        # nor what else waits for the commit; the sweeps give the lost task again.
        transaction.on_commit(lambda: queued.enqueue(str(run_id)), robust=True)


def _ahead_of_new_runs(backend):
    """The task of a resumed run, put where the backend takes it before new runs' tasks: at a
    higher priority, or, where there is none (RQ), in the queue its workers look at first
    (``RESUMED_QUEUE``, when the backend has one). Otherwise in line with the others."""
    if _takes_higher_priority_first(backend):
        return execute_run.using(priority=RESUME_PRIORITY)
    if RESUMED_QUEUE in backend.queues:
        return execute_run.using(queue_name=RESUMED_QUEUE)
    return execute_run


def _takes_higher_priority_first(backend) -> bool:
    """Whether the backend takes a task of higher priority (Django's scale) before others.
    django-tasks-celery says it does, but over a Redis broker kombu reads priorities the other
    way up (0 first), so a resumed run would be taken after every new one: it is given none."""
    return backend.supports_priority and not type(backend).__module__.startswith("django_tasks_celery")


def queue_is_in_the_database() -> bool:
    """Whether the task backend keeps its queue in the database, where a task commits with the
    change that asked for it; one outside (Redis) can lose a task given it after the commit."""
    return _queue_is_in_the_database(task_backends[execute_run.backend])


def _queue_is_in_the_database(backend) -> bool:
    from django_tasks_db import DatabaseBackend

    return isinstance(backend, DatabaseBackend)
