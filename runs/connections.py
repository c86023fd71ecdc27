"""Where the engine gets the connections a run may use: the app that keeps them registers here.

The connections app registers a source that answers, for a run and the apps its tools act
through, the connection of the person who started it to each app they have connected (working:
refreshed first if it had expired). What the run does without one is the call policy's to say.
"""

from collections.abc import Callable, Collection, Mapping

from kindgi import ToolConnection
from runs.models import Run

ConnectionSource = Callable[[Run, Collection[str]], Mapping[str, ToolConnection]]
_sources: list[ConnectionSource] = []


def register_connection_source(source: ConnectionSource) -> None:
    if source not in _sources:
        _sources.append(source)


def connections_for_run(run: Run, apps: Collection[str]) -> dict[str, ToolConnection]:
    if not apps:
        return {}
    found: dict[str, ToolConnection] = {}
    for source in _sources:
        found |= source(run, apps)
    return found
