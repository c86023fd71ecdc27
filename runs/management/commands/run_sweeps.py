import json

from django.core.management.base import BaseCommand, CommandError

from core.conf import setting
from core.sweeps import Sweep
from runs.sweeper import sweep_forever, sweep_once, this_process


def _said(done: dict) -> str:
    """One JSON line: each sweep's name, and what it did (ids; a count for deliveries)."""
    return json.dumps({name: _what(result) for name, result in done.items()})


def _what(result):
    if isinstance(result, Sweep):
        return {"done": [str(item) for item in result.done], "left": result.left}
    return result


def _anything(done: dict) -> bool:
    return any(
        result.done or result.left if isinstance(result, Sweep) else result for result in done.values()
    )


class Command(BaseCommand):
    help = (
        "Run the periodic sweeps (expire approvals, retry webhooks, recover runs): once, or with "
        "--every for ever. One process at a time sweeps, whichever holds the sweep lease; kindgi dev "
        "and every kindgi worker run a sweeper of their own, so this is for cron or a dedicated process."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--every", type=float, default=None, help="Keep sweeping, every this many seconds."
        )

    def handle(self, *args, every: float | None, **options):
        if every is None:
            done = sweep_once(this_process())
            if done is None:
                self.stdout.write("Another process holds the sweep lease: it sweeps.")
            else:
                self.stdout.write(_said(done))
            return
        interval = every or setting("KINDGI_SWEEP_SECONDS")
        if not interval:
            # Said, not a quiet exit a process manager would restart for ever.
            raise CommandError(
                "KINDGI_SWEEP_SECONDS is 0, which turns the sweeps off: set it (5, say) to run them"
            )
        sweep_forever(interval, report=self._report)

    def _report(self, done: dict) -> None:
        if _anything(done):
            self.stdout.write(_said(done))
            self.stdout.flush()
