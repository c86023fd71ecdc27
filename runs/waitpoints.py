"""What other apps do when a run starts or stops waiting on a waitpoint of theirs.

The approvals app registers the ``approval`` kind: it creates an Approval when
a run suspends on one and cancels it when the run is cancelled. Handlers run
inside the run's transaction, with the run row locked, so a waitpoint and its
record come and go together (a run that ends alone is locked by the claimed UPDATE that
follows in the same transaction, which takes the handler's work back if the claim is gone).
"""

from typing import Any, Protocol

from runs.models import Run


class WaitpointHandler(Protocol):
    def on_suspend(self, run: Run, waitpoint: dict[str, Any], *, first: bool = False) -> dict[str, Any]:
        """Record what the run waits on; return the waitpoint to store (it may add ids). ``first``:
        the run never waited on it before, so no record of it can exist yet."""

    def on_cancel(self, run: Run) -> None:
        """The run was cancelled while it may have been waiting."""

    def may_resolve_any(self, run_ids: list, user) -> bool:
        """Whether ``user`` may resolve one of the waits of the runs ``run_ids`` (decide one of
        their pending approvals): one of the rights to cancel a run (``runs.permissions``)."""


_handlers: dict[str, WaitpointHandler] = {}


def register(kind: str, handler: WaitpointHandler) -> None:
    _handlers[kind] = handler


def owned_by_an_app(kind: str) -> bool:
    """Whether waitpoints of ``kind`` are resolved only through the app that registered them."""
    return kind in _handlers


def on_suspend(run: Run, waitpoint: dict[str, Any], *, first: bool = False) -> dict[str, Any]:
    handler = _handlers.get(waitpoint.get("kind", ""))
    return handler.on_suspend(run, waitpoint, first=first) if handler else waitpoint


def on_cancel(run: Run) -> None:
    for handler in _handlers.values():
        handler.on_cancel(run)


def may_resolve_any(run_ids: list, user) -> bool:
    return any(handler.may_resolve_any(run_ids, user) for handler in _handlers.values())
