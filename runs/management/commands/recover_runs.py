import time

from django.core.management.base import BaseCommand, CommandError

from core.sweeps import report_left
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
            sweep = recover_stuck_runs()
            self.stdout.write(f"Recovered {len(sweep.done)} run(s).")
            report_left(self, sweep)
            if every is None:
                if sweep.left:
                    raise CommandError(f"{len(sweep.left)} run(s) left as they were; see above")
                return
            time.sleep(every)
