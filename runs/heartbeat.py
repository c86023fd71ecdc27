"""Keep an executor's claims alive while it works.

A claim is renewed whenever the engine records a step, so a tool call longer than the lease
(``KINDGI_RUN_LEASE_SECONDS``) would let it expire and the run be taken for a dead executor's.
While a run executes, one thread per process renews the claims this process holds, each a
third of the way into its lease. A claim that is no longer ours is simply not renewed.
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from uuid import UUID

from django.db import connections

from core.conf import setting
from runs.journal import do_renew_claim

# run id → (token, when this process last renewed the claim, by time.monotonic)
_claims: dict[UUID, tuple[str, float]] = {}
_lock = threading.Lock()
_thread: threading.Thread | None = None


@contextmanager
def claim_held(run_id: UUID, token: str) -> Iterator[None]:
    """Precondition: the claim was just taken (or renewed)."""
    with _lock:
        _claims[run_id] = (token, time.monotonic())
        _start()
    try:
        yield
    finally:
        with _lock:
            _claims.pop(run_id, None)


def _start() -> None:
    global _thread
    if _thread is None or not _thread.is_alive():
        _thread = threading.Thread(target=_beat, name="kindgi-claim-heartbeat", daemon=True)
        _thread.start()


def _beat() -> None:
    while True:
        renew_every = setting("KINDGI_RUN_LEASE_SECONDS") / 3
        time.sleep(min(1.0, renew_every))
        now = time.monotonic()
        with _lock:
            due = [
                (run_id, token)
                for run_id, (token, renewed) in _claims.items()
                if now - renewed >= renew_every
            ]
        if due:
            _renew(due, now)


def _renew(due: list[tuple[UUID, str]], now: float) -> None:
    try:
        for run_id, token in due:
            do_renew_claim(run_id, token=token)
            with _lock:
                if _claims.get(run_id, (None,))[0] == token:
                    _claims[run_id] = (token, now)
    finally:
        connections.close_all()  # hold no connection between beats
