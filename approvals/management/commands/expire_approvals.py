import time

from django.core.management.base import BaseCommand

from approvals.actions import expire_due_approvals


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
            expired = expire_due_approvals()
            self.stdout.write(f"Expired {expired} approval(s).")
            if every is None:
                return
            time.sleep(every)
