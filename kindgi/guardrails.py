"""Before-tool guardrails: checks that judge a tool call before it starts.

    @before_tool(tools=["acme-ops.post-update"])
    def no_shouting(call: GuardedCall) -> Judgement:
        if call.arguments.get("message", "").isupper():
            return refuse("Write the update in sentence case.")
        return allow()

A guarded call starts only after the calls before it have finished, and the
guardrail sees their results in ``earlier_results``. A refusal reaches the
model as data, with the reason.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kindgi.errors import DefinitionError


@dataclass(frozen=True, kw_only=True)
class GuardedCall:
    call_id: str
    tool_id: str
    arguments: Mapping[str, Any]
    run_id: str
    # The tool messages of this step's calls that ran before this one, in order.
    earlier_results: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, kw_only=True)
class Judgement:
    allowed: bool
    reason: str = ""


def allow(reason: str = "") -> Judgement:
    return Judgement(allowed=True, reason=reason)


def refuse(reason: str) -> Judgement:
    return Judgement(allowed=False, reason=reason)


@dataclass(frozen=True, kw_only=True)
class BeforeToolGuardrail:
    name: str
    judge: Callable[[GuardedCall], Judgement]
    # None: every call of the agent.
    tools: frozenset[str] | None = None

    def applies_to(self, tool_id: str) -> bool:
        return self.tools is None or tool_id in self.tools


def before_tool(
    *, tools: Iterable[str] | None = None
) -> Callable[[Callable[[GuardedCall], Judgement]], BeforeToolGuardrail]:
    """Make a function a guardrail for the listed tools (all of the agent's, when None)."""

    def decorate(judge: Callable[[GuardedCall], Judgement]) -> BeforeToolGuardrail:
        if not callable(judge):
            raise DefinitionError(f"guardrail {judge!r} is not callable")
        return BeforeToolGuardrail(
            name=f"{judge.__module__}.{judge.__qualname__}",
            judge=judge,
            tools=None if tools is None else frozenset(tools),
        )

    return decorate


def as_guardrail(value: Any, *, what: str) -> BeforeToolGuardrail:
    if isinstance(value, BeforeToolGuardrail):
        return value
    if callable(value):
        return before_tool()(value)
    raise DefinitionError(f"{what}: {value!r} is not callable")
