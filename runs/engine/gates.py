"""The gate for one tool call: run it, ask a person first, or refuse it.

Pure, and table-tested. A call's gate is the stricter of two:

- the agent's gate: its override for the tool (``always_ask`` or ``never_ask``; an admin's
  replaces the code's; an override with a condition applies only when the condition holds on
  the call's arguments), else the default: with ``hitl.tools``, a read-only tool runs and any
  other tool asks on its first use in the conversation; without ``hitl.tools``, no agent gate.
  A flow's tool step has no agent gate.
- the tenant's gate: the most specific matching approval rule (``Rule.precedence``); a rule
  with ``after`` matches only once what it names ran before the call (``runs.engine.sequences``).

Tenant policy is a floor that code cannot lower: a tenant ``deny`` always wins, and an ask
from either side asks. When both ask, the approval needs the highest role either names, waits
the shortest TTL, and only the rule's named reviewers (if any) may decide it, as many of them
as the rule asks (two-person approvals). (Agents name no role, TTL, reviewers or count today, so
those come from the rule.)
"""

import fnmatch
import functools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from kindgi.agents import AgentDefinition
from kindgi.conditions import Condition
from kindgi.gates import RuleGate
from runs.engine.budgets import Budget
from runs.engine.sequences import NOTHING_EARLIER, After, Earlier


class Gate(StrEnum):
    RUN = "run"
    ASK = "ask"
    REFUSE = "refuse"


TOOL_NOT_ALLOWED = "TOOL_NOT_ALLOWED"


@dataclass(frozen=True, kw_only=True)
class GateDecision:
    gate: Gate
    reason: str
    # For REFUSE: the error code the model receives.
    code: str = ""
    # For ASK: who may decide, and for how long the approval waits.
    required_role: str = ""
    ttl_seconds: int | None = None
    reviewer_ids: tuple[int, ...] = ()
    # How many distinct reviewers must approve before the call runs (a rejection by any one ends it).
    required_approvals: int = 1
    # Whether a decision on it needs the reviewer's passkey first (a rule's ``stepUp``).
    step_up: bool = False
    rule_id: int | None = None
    rule_name: str = ""
    # For a REFUSE by a rule: the reason the rule gives, told to the model and in the run's failure.
    rule_reason: str = ""
    # The standing grant that let an ask run instead (``runs.engine.grants``).
    grant_id: int | None = None
    # The tenant's rule that matched, for what the gate step does beyond the gate (its budget).
    rule: "Rule | None" = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"gate": self.gate.value, "reason": self.reason}
        optional = {
            "code": self.code,
            "requiredRole": self.required_role,
            "ttlSeconds": self.ttl_seconds,
            "reviewerIds": list(self.reviewer_ids),
            "requiredApprovals": self.required_approvals if self.required_approvals > 1 else 0,
            "stepUp": self.step_up,
            "ruleId": self.rule_id,
            "ruleName": self.rule_name,
            "grantId": self.grant_id,
        }
        data.update({key: value for key, value in optional.items() if value})
        return data


@dataclass(frozen=True, kw_only=True)
class CallFacts:
    """What the gate may look at: the tool, the agent (empty for a flow step), what the tool
    touches, the arguments, and what ran before it (only gathered when a rule asks)."""

    tool_id: str
    agent_id: str = ""
    read_only: bool
    effects: tuple[tuple[str, str], ...] = ()
    arguments: Mapping[str, Any] | None = None
    earlier: Earlier = NOTHING_EARLIER


@dataclass(frozen=True, kw_only=True)
class Override:
    gate: str  # always_ask | never_ask
    source: str  # "admin" | "agent code"
    when: Callable[[Mapping[str, Any]], bool] | None = None
    when_text: str = ""

    def applies(self, arguments: Mapping[str, Any] | None) -> bool:
        if self.when is None:
            return True
        try:
            return bool(self.when(arguments or {}))
        except Exception:
            # A predicate that breaks must not open a gate: an ask applies, a never_ask does not.
            return self.gate == "always_ask"

    def describe(self) -> str:
        condition = f" when {self.when_text}" if self.when_text else ""
        return f"override {self.gate}{condition} ({self.source})"


@dataclass(frozen=True, kw_only=True)
class AgentGates:
    """The agent's side of the gate: whether ``hitl.tools`` is present, and its overrides by tool
    id (an admin's already in place of the code's)."""

    enabled: bool
    overrides: Mapping[str, Override]


def code_overrides(agent: AgentDefinition) -> dict[str, Override]:
    """The overrides the agent's code declares, by tool id (an admin may replace each)."""
    names = agent.override_condition_names
    return {
        tool_id: Override(
            gate=gate.value,
            source="agent code",
            when=agent.override_conditions.get(tool_id),
            when_text=f"{names[tool_id]}(arguments)" if tool_id in names else "",
        )
        for tool_id, gate in (agent.gate_overrides or {}).items()
    }


# Ties between equally specific rules go to the stricter gate.
_STRICTNESS = [RuleGate.DENY, RuleGate.ALWAYS_ASK, RuleGate.ASK_ONCE, RuleGate.NEVER_ASK]


def _pattern_score(pattern: str) -> int:
    if pattern in ("", "*"):
        return 0
    return 1 if any(char in pattern for char in "*?[") else 2


@dataclass(frozen=True, kw_only=True)
class Rule:
    id: int
    name: str
    gate: RuleGate
    tool_pattern: str = "*"
    agent_pattern: str = "*"
    effect_kind: str = ""
    resource_pattern: str = ""
    condition: Condition | None = None
    required_role: str = ""
    reason: str = ""
    ttl_seconds: int | None = None
    reviewer_ids: tuple[int, ...] = ()
    required_approvals: int = 1
    after: After | None = None
    budget: Budget | None = None
    step_up: bool = False

    def matches(self, call: CallFacts) -> bool:
        if not fnmatch.fnmatchcase(call.tool_id, self.tool_pattern or "*"):
            return False
        if not fnmatch.fnmatchcase(call.agent_id, self.agent_pattern or "*"):
            return False
        if (self.effect_kind or self.resource_pattern) and not any(
            (not self.effect_kind or kind == self.effect_kind)
            and (not self.resource_pattern or fnmatch.fnmatchcase(resource, self.resource_pattern))
            for kind, resource in call.effects
        ):
            return False
        if self.after is not None and not self.after.holds(call.earlier):
            return False
        return self.condition is None or self.condition.holds(call.arguments or {})

    def describe(self) -> str:
        """How a reason names the rule: ``rule "x" (always_ask)``, and what it applies after."""
        after = f", {self.after.describe()}" if self.after is not None else ""
        return f'rule "{self.name}" ({self.gate.value}{after})'

    @functools.cached_property
    def precedence(self) -> tuple:
        """Sort key, most specific first: a rule naming the exact tool beats a glob, which beats
        any tool; then the same for the agent; then naming an effect kind, a resource (exact over
        glob), what ran before and a condition. Ties go to the stricter gate, then to the older
        rule."""
        return (
            -_pattern_score(self.tool_pattern),
            -_pattern_score(self.agent_pattern),
            -int(bool(self.effect_kind)),
            -_pattern_score(self.resource_pattern),
            -int(self.after is not None),
            -int(self.condition is not None),
            _STRICTNESS.index(self.gate),
            self.id,
        )


def matching_rule(rules: Sequence[Rule], call: CallFacts) -> Rule | None:
    """The most specific rule that matches the call (``Rule.precedence``), or None."""
    if isinstance(rules, CompiledRules):
        return rules.match(call)
    matching = [rule for rule in rules if rule.matches(call)]
    return min(matching, key=lambda rule: rule.precedence) if matching else None


class CompiledRules(tuple):
    """A tenant's rules, indexed once so that judging a call looks at the few rules that could
    match it, in precedence order, and stops at the first that does.

    A rule naming its tool exactly is filed under that tool; one whose tool is a glob, under the
    pack its glob's fixed start names (``acme-ops.*`` under ``acme-ops``; others among every
    pack's); one for any tool, under the agent it names exactly (others among every agent's).
    Precedence ranks the tool's pattern first, so the exact rules come before the globs, and the
    globs before the rules for any tool: the first rule that matches, in that order, is the one
    ``matching_rule`` would pick among all of them."""

    def __new__(cls, rules: Sequence[Rule]) -> "CompiledRules":
        return super().__new__(cls, sorted(rules, key=lambda rule: rule.precedence))

    def __init__(self, rules: Sequence[Rule]) -> None:
        self.looked_back = frozenset(rule.after.scope for rule in self if rule.after is not None)
        self._exact: dict[str, list[Rule]] = {}
        self._globs_by_pack: dict[str, list[Rule]] = {}
        self._globs: list[Rule] = []
        self._any_tool_by_agent: dict[str, list[Rule]] = {}
        self._any_tool: list[Rule] = []
        for rule in self:  # sorted: each list keeps precedence order
            tool, agent = rule.tool_pattern or "*", rule.agent_pattern or "*"
            score = _pattern_score(tool)
            if score == 2:
                self._exact.setdefault(tool, []).append(rule)
            elif score == 1:
                pack = _fixed_pack(tool)
                if pack is None:
                    self._globs.append(rule)
                else:
                    self._globs_by_pack.setdefault(pack, []).append(rule)
            elif _pattern_score(agent) == 2:
                self._any_tool_by_agent.setdefault(agent, []).append(rule)
            else:
                self._any_tool.append(rule)

    def match(self, call: CallFacts) -> Rule | None:
        pack = call.tool_id.partition(".")[0]
        tiers = (
            self._exact.get(call.tool_id, ()),
            _merged(self._globs_by_pack.get(pack, ()), self._globs),
            _merged(self._any_tool_by_agent.get(call.agent_id, ()), self._any_tool),
        )
        for tier in tiers:
            for rule in tier:
                if rule.matches(call):
                    return rule
        return None


def scopes_looked_back(rules: Sequence[Rule]) -> frozenset[str]:
    """The scopes (run, conversation) whose earlier calls some rule's ``after`` looks at: none,
    for a tenant without such rules, and then the gate gathers nothing of what ran before."""
    if isinstance(rules, CompiledRules):
        return rules.looked_back
    return frozenset(rule.after.scope for rule in rules if rule.after is not None)


def _fixed_pack(pattern: str) -> str | None:
    """The pack a glob is bound to by its fixed start (``acme-ops.post-*``: ``acme-ops``)."""
    fixed = pattern[: min((pattern.index(c) for c in "*?[" if c in pattern), default=len(pattern))]
    pack, dot, _ = fixed.partition(".")
    return pack if dot else None


def _merged(first: Sequence[Rule], second: Sequence[Rule]) -> Sequence[Rule]:
    """Two lists in precedence order, as one in that order."""
    if not first:
        return second
    if not second:
        return first
    return sorted((*first, *second), key=lambda rule: rule.precedence)


def decide_gate(
    *,
    call: CallFacts,
    agent: AgentGates | None,
    rules: Sequence[Rule] = (),
    approved_tools: Collection[str] = (),
) -> GateDecision:
    """The stricter of the agent's gate and the tenant's; ``agent`` is None for a flow's step."""
    tenant = tenant_gate(call, rules, approved_tools)
    if tenant is not None and tenant.gate == Gate.REFUSE:
        return tenant
    sides = [side for side in (agent_gate(call, agent, approved_tools), tenant) if side is not None]
    if not sides:
        return GateDecision(gate=Gate.RUN, reason="no gate: a flow step that no rule matches")
    asking = [side for side in sides if side.gate == Gate.ASK]
    if not asking:
        return GateDecision(
            gate=Gate.RUN,
            reason="; ".join(side.reason for side in sides),
            rule_id=tenant.rule_id if tenant else None,
            rule_name=tenant.rule_name if tenant else "",
            rule=tenant.rule if tenant else None,
        )
    ttls = [side.ttl_seconds for side in asking if side.ttl_seconds]
    named = next((side for side in asking if side.rule_id is not None), None)
    return GateDecision(
        gate=Gate.ASK,
        reason="; ".join(side.reason for side in asking),
        required_role=next((side.required_role for side in asking if side.required_role), ""),
        ttl_seconds=min(ttls) if ttls else None,
        reviewer_ids=named.reviewer_ids if named else (),
        required_approvals=named.required_approvals if named else 1,
        step_up=any(side.step_up for side in asking),
        rule_id=named.rule_id if named else None,
        rule_name=named.rule_name if named else "",
        rule=tenant.rule if tenant else None,
    )


def role_rank(role: str, roles: Sequence[str]) -> int:
    """Where ``role`` stands among ``roles`` (the site's reviewer roles, lowest first): no role is
    the lowest; a role the order does not know ranks above every role it knows (fail closed:
    nobody may decide what needs it, so it expires)."""
    if not role:
        return -1
    return roles.index(role) if role in roles else len(roles)


def strictest_ask(gates: Sequence[Mapping[str, Any]], *, roles: Sequence[str]) -> dict[str, Any]:
    """What an approval must need to be at least each of ``gates`` (asks, as ``GateDecision.to_dict``
    writes them, the one that takes precedence for its named reviewers first): the highest role
    any of them needs (by ``roles``, lowest first), the most approvals any needs, and the named
    reviewers of the first that names any. Only what is more than the default is in it."""
    role = max(
        (gate.get("requiredRole") or "" for gate in gates), key=lambda r: role_rank(r, roles), default=""
    )
    approvals = max((gate.get("requiredApprovals") or 1 for gate in gates), default=1)
    named = next((list(gate["reviewerIds"]) for gate in gates if gate.get("reviewerIds")), [])
    # One approval is the default, left out as ``GateDecision.to_dict`` leaves it out.
    needs = {
        "requiredRole": role,
        "reviewerIds": named,
        "requiredApprovals": approvals if approvals > 1 else 0,
        "stepUp": any(gate.get("stepUp") for gate in gates),
    }
    return {key: value for key, value in needs.items() if value}


def agent_gate(
    call: CallFacts, agent: AgentGates | None, approved_tools: Collection[str]
) -> GateDecision | None:
    if agent is None:
        return None
    override = agent.overrides.get(call.tool_id)
    if override is not None and override.applies(call.arguments):
        gate = Gate.ASK if override.gate == "always_ask" else Gate.RUN
        return GateDecision(gate=gate, reason=override.describe())
    if not agent.enabled:
        return GateDecision(gate=Gate.RUN, reason="default: the agent has no tool gates")
    if call.read_only:
        return GateDecision(gate=Gate.RUN, reason="default: the tool is read-only")
    if call.tool_id in approved_tools:
        return GateDecision(gate=Gate.RUN, reason="default: approved earlier in this conversation")
    return GateDecision(gate=Gate.ASK, reason="default: first use of a tool that is not read-only")


def tenant_gate(
    call: CallFacts, rules: Sequence[Rule], approved_tools: Collection[str]
) -> GateDecision | None:
    rule = matching_rule(rules, call)
    if rule is None:
        return None
    reason = rule.describe()
    named = {"rule_id": rule.id, "rule_name": rule.name, "rule": rule}
    if rule.gate == RuleGate.DENY:
        why = f": {rule.reason}" if rule.reason else ""
        return GateDecision(
            gate=Gate.REFUSE, code=TOOL_NOT_ALLOWED, reason=reason + why, rule_reason=rule.reason, **named
        )
    if rule.gate == RuleGate.NEVER_ASK or (rule.gate == RuleGate.ASK_ONCE and call.tool_id in approved_tools):
        suffix = ", approved earlier in this conversation" if rule.gate == RuleGate.ASK_ONCE else ""
        return GateDecision(gate=Gate.RUN, reason=reason + suffix, **named)
    return GateDecision(
        gate=Gate.ASK,
        reason=reason,
        required_role=rule.required_role,
        ttl_seconds=rule.ttl_seconds,
        reviewer_ids=rule.reviewer_ids,
        required_approvals=rule.required_approvals,
        step_up=rule.step_up,
        **named,
    )
