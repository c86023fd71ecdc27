"""Where the engine gets a tenant's standing grants, and has their uses counted: the app that
keeps them registers here (``runs.engine.grants`` says what a grant covers)."""

from collections.abc import Collection, Sequence
from typing import Protocol

from runs.engine.grants import Grant, GrantKeeper


class GrantSource(GrantKeeper, Protocol):
    def grants_of_tenant(self, tenant_id) -> Sequence[Grant]:
        """The tenant's grants that may still cover a call: not revoked, not expired."""

    def release_uncalled(self, run_id, called: Collection[str]) -> None:
        """Give back the uses of a finished run's calls that never ran (not among ``called``)."""


_sources: list[GrantSource] = []


def register_grant_source(source: GrantSource) -> None:
    if all(type(known) is not type(source) for known in _sources):
        _sources.append(source)


def grants_for_tenant(tenant_id) -> list[Grant]:
    return [grant for source in _sources for grant in source.grants_of_tenant(tenant_id)]


def grant_keeper() -> GrantKeeper | None:
    """Who counts the grants' uses (the one app that keeps grants), or None when none does."""
    return _sources[0] if _sources else None


def release_uncalled_uses(run_id, called: Collection[str]) -> None:
    for source in _sources:
        source.release_uncalled(run_id, called)
