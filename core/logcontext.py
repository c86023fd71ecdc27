"""Which run the code running now is about, for its log lines (``core.logs`` writes it on each).

Kept apart from the logging set-up so that the run engine, which reads no settings, can mark
its tool threads without importing them.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from uuid import UUID

_current_run: ContextVar[str | None] = ContextVar("kindgi_current_run", default=None)


@contextmanager
def about_run(run_id: UUID | str) -> Iterator[None]:
    """Mark everything logged inside as about ``run_id`` (in this thread or task, and in the
    threads started from it with its context)."""
    token = _current_run.set(str(run_id))
    try:
        yield
    finally:
        _current_run.reset(token)


def current_run() -> str | None:
    return _current_run.get()
