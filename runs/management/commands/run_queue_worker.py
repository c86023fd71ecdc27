from django.core.management.base import BaseCommand, CommandError

from core.conf import setting
from runs import queue_workers


class Command(BaseCommand):
    help = (
        "Execute and resume runs queued in Redis (KINDGI_TASKS=rq or celery) with that library's "
        "own worker, and serve this worker's metrics for Prometheus with --metrics-port. The "
        "sweeps run elsewhere: `kindgi sweeper`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--queue-name", default="default", help="The queue to take runs from.")
        parser.add_argument("--burst", action="store_true", help="RQ: end once the queue is empty.")
        parser.add_argument(
            "--metrics-port", type=int, default=None, help="Serve /metrics for Prometheus on this port."
        )
        parser.add_argument("--metrics-host", default="0.0.0.0", help="The address to serve metrics on.")

    def handle(self, *, queue_name: str, burst: bool, metrics_port: int | None, metrics_host: str, **options):
        queue = setting("KINDGI_TASK_QUEUE")
        if queue not in ("rq", "celery"):
            raise CommandError(
                f"KINDGI_TASKS is {queue!r}: this worker serves rq or celery (the database queue's "
                "is `manage.py run_worker`)"
            )
        if burst and queue != "rq":
            raise CommandError("--burst is RQ's: a Celery worker runs until it is stopped")
        queue_workers.prepare(metrics_port=metrics_port, metrics_host=metrics_host)
        if queue == "rq":
            queue_workers.work_rq(queue_name, burst=burst)
        else:
            queue_workers.work_celery(queue_name)
