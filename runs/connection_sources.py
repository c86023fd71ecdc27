"""Where the engine gets the connections a run may use: the app that keeps them registers here.

The connections app registers a source that answers, for a run and the apps its tools act
through with whose connection to each (``runs.engine.policy.connection_owner``), those
connections that work (refreshed first if they had expired). What the run does without one is
the call policy's to say; which apps there are, the source says too (a start that names whose
connection to use is checked against them).
"""

from collections.abc import Collection, Mapping
from typing import Protocol

from kindgi import ToolConnection
from runs.models import Run


class ConnectionSource(Protocol):
    def connections(self, run: Run, owners: Mapping[str, str]) -> Mapping[str, ToolConnection]:
        """The working connection of each ``owners`` app's owner (app -> user id) to it."""

    def app_names(self, tenant_id) -> Collection[str]:
        """The apps a run of ``tenant_id`` may act through."""

    # Apps the source itself provides (the mail app's "mailbox"): no tenant's app may take the name.
    built_in_apps: tuple[str, ...]


_sources: list[ConnectionSource] = []


def register_connection_source(source: ConnectionSource) -> None:
    if all(type(known) is not type(source) for known in _sources):
        _sources.append(source)


def connections_for_run(run: Run, owners: Mapping[str, str]) -> dict[str, ToolConnection]:
    if not owners:
        return {}
    found: dict[str, ToolConnection] = {}
    for source in _sources:
        found |= source.connections(run, owners)
    return found


def app_names(tenant_id) -> set[str]:
    return {name for source in _sources for name in source.app_names(tenant_id)}


def built_in_apps() -> set[str]:
    return {name for source in _sources for name in getattr(source, "built_in_apps", ())}
