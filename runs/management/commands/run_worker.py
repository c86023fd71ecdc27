import os

from django.core.management import CommandError
from django.utils.autoreload import DJANGO_AUTORELOAD_ENV, run_with_reloader
from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand
from prometheus_client import start_http_server

from core.metrics import process_registry
from runs.sweeper import start_sweeper
from runs.worker import WakeableWorker
from tools.mcp.refresher import start_refresher


class Command(DatabaseWorkerCommand):
    help = (
        "Execute and resume runs from the database queue (django-tasks-db's db_worker, woken at once "
        "by a queued task on PostgreSQL), and serve this worker's own metrics (tool-call durations) "
        "for Prometheus with --metrics-port."
    )

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--metrics-port", type=int, default=None, help="Serve /metrics for Prometheus on this port."
        )
        parser.add_argument("--metrics-host", default="0.0.0.0", help="The address to serve metrics on.")

    def handle(
        self,
        *,
        verbosity: int,
        queue_name: str,
        interval: float,
        batch: bool,
        backend_name: str,
        startup_delay: bool,
        reload: bool,
        max_tasks: int | None,
        worker_id: str,
        exclude_queues: str,
        metrics_port: int | None,
        metrics_host: str,
        **options,
    ):
        self.configure_logging(verbosity)
        queue_names = queue_name.split(",")
        excluded_queue_names = exclude_queues.split(",") if exclude_queues else []
        if excluded_queue_names and "*" not in queue_names:
            raise CommandError("--exclude-queues can only be used with --queue-name=*")
        if metrics_port is not None:
            start_http_server(metrics_port, addr=metrics_host, registry=process_registry())
        start_refresher()  # MCP servers' listings stay fresh wherever runs execute
        start_sweeper()  # expiry, webhook retries, recovery: one worker at a time sweeps
        worker = WakeableWorker(
            queue_names=queue_names,
            interval=interval,
            batch=batch,
            backend_name=backend_name,
            startup_delay=startup_delay,
            max_tasks=max_tasks,
            worker_id=worker_id,
            excluded_queue_names=excluded_queue_names,
        )
        if reload and not batch:
            if os.environ.get(DJANGO_AUTORELOAD_ENV) == "true":
                worker.configure_signals()  # only the reloader's child
            run_with_reloader(worker.run)
        else:
            worker.configure_signals()
            worker.run()
