"""Where the engine gets a tenant's approval rules from: the app that keeps them registers here."""

from collections.abc import Callable, Sequence

from runs.engine.gates import Rule

_sources: list[Callable[[object], Sequence[Rule]]] = []


def register_rule_source(source: Callable[[object], Sequence[Rule]]) -> None:
    if source not in _sources:
        _sources.append(source)


def rules_for_tenant(tenant_id) -> list[Rule]:
    return [rule for source in _sources for rule in source(tenant_id)]
