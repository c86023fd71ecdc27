from django_tasks_db.management.commands.db_worker import Command as DatabaseWorkerCommand
from prometheus_client import start_http_server

from core.metrics import process_registry
from runs.sweeper import start_sweeper
from tools.mcp.refresher import start_refresher


class Command(DatabaseWorkerCommand):
    help = (
        "Execute and resume runs from the database queue (django-tasks-db's db_worker), and serve "
        "this worker's own metrics (tool-call durations) for Prometheus with --metrics-port."
    )

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--metrics-port", type=int, default=None, help="Serve /metrics for Prometheus on this port."
        )
        parser.add_argument("--metrics-host", default="0.0.0.0", help="The address to serve metrics on.")

    def handle(self, *args, metrics_port: int | None, metrics_host: str, **options):
        if metrics_port is not None:
            start_http_server(metrics_port, addr=metrics_host, registry=process_registry())
        start_refresher()  # MCP servers' listings stay fresh wherever runs execute
        start_sweeper()  # expiry, webhook retries, recovery: one worker at a time sweeps
        super().handle(*args, **options)
