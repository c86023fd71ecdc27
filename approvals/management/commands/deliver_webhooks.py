import time

from django.core.management.base import BaseCommand

from approvals.webhooks import deliver_due_webhooks


class Command(BaseCommand):
    help = "Send the approval webhook deliveries that are due (first attempts and retries)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--every", type=float, default=None, help="Keep sending, every this many seconds."
        )

    def handle(self, *args, every: float | None, **options):
        while True:
            self.stdout.write(f"Delivered {deliver_due_webhooks()} webhook(s).")
            if every is None:
                return
            time.sleep(every)
