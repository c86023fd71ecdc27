"""One scheduler for Kindgi's periodic work: expiring approvals, retrying webhooks, recovering
runs whose executor died, and whatever else an app registers.

Every process that sweeps (``kindgi dev``'s sweeper, each ``kindgi worker``) wakes every
``KINDGI_SWEEP_SECONDS`` and sweeps only if it holds the sweep lease: one row, taken with a single
conditional UPDATE, so that one process acts at a time across processes and machines; a holder
that dies loses it when it expires. Each sweep handles at most ``KINDGI_SWEEP_LIMIT`` items a round
and is safe to repeat (each item is decided under its own row lock). The management commands
(``expire_approvals``, ``deliver_webhooks``, ``recover_runs``, ``run_sweeps``) stay for cron.
"""

import contextlib
import logging
import os
import socket
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from django.db import IntegrityError
from django.db.models import Q
from django.utils import timezone

from core.background import repeat, start_every
from core.conf import setting
from runs.models import SweepLease

logger = logging.getLogger("kindgi.sweeps")

LEASE = "sweeps"
# A sweep: given now and the most items to handle, what it did (a Sweep, or a count).
SweepFunction = Callable[..., Any]
_sweeps: dict[str, SweepFunction] = {}


def register_sweep(name: str, function: SweepFunction) -> None:
    _sweeps[name] = function


def this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def take_lease(holder: str, *, seconds: float, now=None) -> bool:
    """Whether ``holder`` holds the sweep lease for the next ``seconds``: it had it, or nobody
    did (or the last holder's expired)."""
    now = now or timezone.now()
    with contextlib.suppress(IntegrityError):  # another process made it at the same moment
        SweepLease.objects.get_or_create(name=LEASE, defaults={"holder": "", "expires_at": now})
    taken = (
        SweepLease.objects.filter(name=LEASE)
        .filter(Q(expires_at__lte=now) | Q(holder=holder))
        .update(holder=holder, expires_at=now + timedelta(seconds=seconds))
    )
    return taken == 1


def sweep_once(holder: str, *, now=None) -> dict[str, Any] | None:
    """One round: every registered sweep, if ``holder`` holds the lease (None if not). A sweep that
    breaks is logged and the others still run."""
    interval = setting("KINDGI_SWEEP_SECONDS") or 1
    if not take_lease(holder, seconds=max(3 * interval, 30), now=now):
        return None
    done: dict[str, Any] = {}
    for name, function in _sweeps.items():
        try:
            done[name] = function(now=now, limit=setting("KINDGI_SWEEP_LIMIT"))
        except Exception:
            logger.exception("sweep %s failed; the next round tries again", name)
    return done


def start_sweeper() -> bool:
    """This process's sweeper thread, started once; whether one runs (KINDGI_SWEEP_SECONDS 0: none)."""
    holder = this_process()
    return start_every("kindgi-sweeper", setting("KINDGI_SWEEP_SECONDS"), lambda: sweep_once(holder))


def sweep_forever(interval: float, *, report=None) -> None:
    """Sweep every ``interval`` seconds in this thread, for ever (``run_sweeps --every``);
    ``report`` is given what each round that held the lease did."""
    holder = this_process()

    def round_() -> None:
        done = sweep_once(holder)
        if done and report is not None:
            report(done)

    repeat(interval, round_, "the sweeps")
