"""Workers for the queues Kindgi does not run itself (``KINDGI_TASKS=rq`` or ``celery``): the
library's own worker, in this process, after what every Kindgi worker keeps going beside it.

Each takes one task at a time and executes it in its own process, not in a forked child: a run
holds database connections (a pool, on PostgreSQL) that a fork would share between two
processes. No job time limit: a run's own claim, renewed while it executes and recovered by the
sweeps when it lapses, is what tells a dead executor from a slow one. The sweeps are not run
here: ``kindgi sweeper`` runs them, one process at a time holding their lease.
"""

import os

from prometheus_client import start_http_server

from core.metrics import process_registry
from tools.mcp.refresher import start_refresher

# Every module that defines a task, imported before the worker takes one: Celery knows a task
# only once its module has made it.
TASK_MODULES = ("runs.tasks", "approvals.tasks", "approvals.webhooks")


def prepare(*, metrics_port: int | None, metrics_host: str) -> None:
    """What runs beside any worker: its metrics for Prometheus, MCP servers' listings kept fresh."""
    from importlib import import_module

    for module in TASK_MODULES:
        import_module(module)
    if metrics_port is not None:
        start_http_server(metrics_port, addr=metrics_host, registry=process_registry())
    start_refresher()


def work_rq(queue: str, *, burst: bool = False) -> None:
    import django_rq
    from django_tasks_rq.backend import Job
    from rq.worker import SimpleWorker

    from runs.dispatch import RESUMED_QUEUE

    # Resumed runs first: RQ takes from the queues in the order given.
    worker = django_rq.get_worker(RESUMED_QUEUE, queue, job_class=Job, worker_class=SimpleWorker)
    # The scheduler moves deferred tasks (a webhook's next attempt) to the queue when due; one
    # worker at a time holds its lock.
    worker.work(burst=burst, with_scheduler=True, logging_level="INFO")


def work_celery(queue: str) -> None:
    from django.tasks import task_backends
    from django.utils.module_loading import import_string

    from runs.tasks import execute_run

    # The site's Celery app, the one its task backend hands runs to: the site names it.
    app = import_string(task_backends[execute_run.backend].options["CELERY_APP"])
    app.worker_main(
        [
            "worker",
            "--queues",
            queue,
            "--pool",
            "solo",
            "--loglevel",
            "INFO",
            "--hostname",
            # Unique per process: several workers on one machine each have their own name.
            f"kindgi-{queue}-{os.getpid()}@%h",
            "--without-gossip",
            "--without-mingle",
        ]
    )
