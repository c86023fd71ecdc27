"""Sequences: a rule that applies only after something ran before the call, in its run or its
conversation ("after this run read outside data, anything that sends data out asks").

A rule's ``after`` names one thing to have happened: a call of a tool matching a glob
(``toolPattern``), a call of a tool with an effect of a kind (``effect``), or a call whose result
was outside data (``outsideData``), over the ``run`` (the default) or the ``conversation`` (its
principal's earlier turns, and this one). What counts is a call that ran: the policy's own
refusals and the calls a person rejected did not. Pure: the driver hands over what the
conversation's earlier turns ran (``CallsSeen``); the run's own calls come from its state.
"""

import fnmatch
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kindgi import ToolDefinition
from kindgi.effects import EffectKind
from runs.engine.conversation import from_outside
from runs.engine.entries import EntryKind
from runs.engine.state import CallResult

RUN = "run"
CONVERSATION = "conversation"
SCOPES = (RUN, CONVERSATION)

# What an ``after`` may name, exactly one of them, and its scope.
AFTER_KEYS = ("toolPattern", "effect", "outsideData")


class AfterError(ValueError):
    """Why a rule's ``after`` is not one, in words for whoever wrote it."""


@dataclass(frozen=True, kw_only=True)
class CallsSeen:
    """What calls that ran touched: their tools, the kinds of their effects, and whether any
    returned outside data."""

    tools: frozenset[str] = frozenset()
    effects: frozenset[str] = frozenset()
    outside_data: bool = False

    def __or__(self, other: "CallsSeen") -> "CallsSeen":
        return CallsSeen(
            tools=self.tools | other.tools,
            effects=self.effects | other.effects,
            outside_data=self.outside_data or other.outside_data,
        )


NOTHING_SEEN = CallsSeen()


@dataclass(frozen=True, kw_only=True)
class Earlier:
    """What ran before a call: in its run, and in the conversation's earlier turns."""

    run: CallsSeen = NOTHING_SEEN
    conversation: CallsSeen = NOTHING_SEEN


NOTHING_EARLIER = Earlier()


@dataclass(frozen=True, kw_only=True)
class After:
    tool_pattern: str = ""
    effect: str = ""
    outside_data: bool = False
    scope: str = RUN

    @classmethod
    def from_json(cls, data: Any) -> "After":
        """The ``after`` of a rule as the API and the database hold it; ``AfterError`` says what
        is wrong with one that is not."""
        if not isinstance(data, Mapping):
            raise AfterError('an object such as {"outsideData": true} or {"toolPattern": "mail.*"}')
        unknown = sorted(set(data) - {*AFTER_KEYS, "scope"})
        if unknown:
            raise AfterError(f"{', '.join(unknown)}: not known (one of {', '.join(AFTER_KEYS)}, and scope)")
        named = [key for key in AFTER_KEYS if key in data]
        if len(named) != 1:
            raise AfterError(f"names exactly one of {', '.join(AFTER_KEYS)}")
        scope = data.get("scope", RUN)
        if scope not in SCOPES:
            raise AfterError(f"scope: not one of {', '.join(SCOPES)}")
        value = data[named[0]]
        if named[0] == "toolPattern":
            if not isinstance(value, str) or not value.strip() or len(value) > 200:
                raise AfterError("toolPattern: a glob on tool ids such as mail.*, at most 200 characters")
            return cls(tool_pattern=value.strip(), scope=scope)
        if named[0] == "effect":
            kinds = [kind.value for kind in EffectKind]
            if value not in kinds:
                raise AfterError(f"effect: not one of {', '.join(kinds)}")
            return cls(effect=value, scope=scope)
        if value is not True:
            raise AfterError("outsideData: true (a rule that applies whether or not is a rule without after)")
        return cls(outside_data=True, scope=scope)

    def to_json(self) -> dict[str, Any]:
        named: dict[str, Any]
        if self.tool_pattern:
            named = {"toolPattern": self.tool_pattern}
        elif self.effect:
            named = {"effect": self.effect}
        else:
            named = {"outsideData": True}
        return named | {"scope": self.scope}

    def holds(self, earlier: Earlier) -> bool:
        seen = earlier.run if self.scope == RUN else earlier.run | earlier.conversation
        if self.tool_pattern:
            return any(fnmatch.fnmatchcase(tool, self.tool_pattern) for tool in seen.tools)
        if self.effect:
            return self.effect in seen.effects
        return seen.outside_data

    def describe(self) -> str:
        where = "this run" if self.scope == RUN else "this conversation"
        if self.tool_pattern:
            return f"after a call of {self.tool_pattern} in {where}"
        if self.effect:
            return f"after a call with a {self.effect} effect in {where}"
        return f"after outside data was read in {where}"


def calls_seen(results: Iterable[CallResult], tool_of: Callable[[str], ToolDefinition | None]) -> CallsSeen:
    """What the calls that ran among ``results`` touched; ``tool_of`` finds each one's tool (a
    tool no longer to be found counts by its id alone)."""
    tools, effects, outside = set(), set(), False
    for done in results:
        if done.kind == EntryKind.TOOL_REFUSED:
            continue  # the policy refused it, or a person rejected it: it did not run
        tools.add(done.tool_id)
        tool = tool_of(done.tool_id)
        if tool is not None:
            effects.update(effect.kind.value for effect in tool.effects)
            outside = outside or from_outside(done, tool)
    return CallsSeen(tools=frozenset(tools), effects=frozenset(effects), outside_data=outside)
