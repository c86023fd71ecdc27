import time

from django.core.management.base import BaseCommand

from runs.actions import recover_stuck_runs


class Command(BaseCommand):
    help = (
        "Queue again the runs whose executor died (their claim expired), so that a worker takes them "
        "over and continues from the journal. Run it from cron, or with --every."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--every", type=float, default=None, help="Keep sweeping, every this many seconds."
        )

    def handle(self, *args, every: float | None, **options):
        while True:
            stuck = recover_stuck_runs()
            self.stdout.write(f"Recovered {len(stuck)} run(s).")
            if every is None:
                return
            time.sleep(every)
