"""The read-only table: `mutating` × each effect kind (DESIGN §1)."""

from dataclasses import replace

import pytest
from pydantic import BaseModel

from kindgi import Effect, EffectKind, ToolOrigin, tool


class Anything(BaseModel):
    value: str = ""


def make_tool(*, mutating: bool, effects=()):
    @tool(id="test-pack.probe", version="1.0.0", mutating=mutating, effects=effects)
    def probe(data: Anything) -> Anything:
        """A probe."""
        return data

    return probe


CHANGING = {"writes", "deletes", "spawns-run", "emits-event", "external-side-effect"}


@pytest.mark.parametrize("kind", [kind.value for kind in EffectKind])
@pytest.mark.parametrize("mutating", [True, False])
def test_read_only_needs_mutating_false_and_no_changing_effect(mutating, kind):
    probe = make_tool(mutating=mutating, effects=[Effect(kind=kind, resource="external:x")])
    expected = (not mutating) and kind not in CHANGING
    assert probe.is_read_only is expected


@pytest.mark.parametrize("mutating", [True, False])
def test_without_effects_only_the_flag_decides(mutating):
    assert make_tool(mutating=mutating).is_read_only is (not mutating)


def test_mutating_defaults_to_true():
    @tool(id="test-pack.probe", version="1.0.0")
    def probe(data: Anything) -> Anything:
        """A probe."""
        return data

    assert probe.mutating is True
    assert probe.is_read_only is False


def test_one_changing_effect_among_reads_is_enough_to_make_it_mutating():
    probe = make_tool(
        mutating=False,
        effects=[Effect.reads("external:a"), Effect.network("api:b"), Effect.deletes("external:a")],
    )
    assert probe.is_read_only is False
    assert probe.contradicting_effects == (Effect.deletes("external:a"),)


def test_a_consistent_tool_contradicts_nothing():
    assert make_tool(mutating=False, effects=[Effect.reads("x:y")]).contradicting_effects == ()
    assert make_tool(mutating=True, effects=[Effect.writes("x:y")]).contradicting_effects == ()


def test_a_tool_from_an_mcp_server_is_never_read_only():
    probe = replace(make_tool(mutating=False), origin=ToolOrigin.MCP)
    assert probe.is_read_only is False
