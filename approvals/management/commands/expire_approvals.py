import time

from django.core.management.base import BaseCommand, CommandError

from approvals.actions.approvals import expire_due_approvals
from core.sweeps import report_left


class Command(BaseCommand):
    help = (
        "Expire pending approvals whose time is up: each counts as a rejection with the rationale "
        "'expired', and its run continues without the call. Run it from cron, or with --every."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--every", type=float, default=None, help="Keep sweeping, every this many seconds."
        )

    def handle(self, *args, every: float | None, **options):
        while True:
            sweep = expire_due_approvals()
            self.stdout.write(f"Expired {len(sweep.done)} approval(s).")
            report_left(self, sweep)
            if every is None:
                if sweep.left:
                    raise CommandError(f"{len(sweep.left)} approval(s) left as they were; see above")
                return
            time.sleep(every)
