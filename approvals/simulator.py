"""The rule simulator: what a draft rule (new, or an edit of one) would have done to the tenant's
recorded calls, next to what their gate did, before the rule is saved.

Each recorded call is judged again by ``runs.engine.policy.gate_of``, the gate step of the one
call policy, with the tenant's rules as they would be with the draft in place; nothing else
decides. Bounded: the latest ``LIMIT`` gated calls in the window, read in one query, and a fixed
number of queries more (rules, admins' overrides), however many calls there are.

Calls are judged in the order they were made, so that a rule with ``after`` sees what ran
before each call in its run (and in its conversation's earlier turns), among the calls judged,
and a rule's budget is used as those calls would have used it (a call the draft would have run
is charged; one it would have asked about is not, since nobody knows what a reviewer would
have said).

What it cannot know is said, not guessed: a call whose tool or agent is no longer in the packs
is counted as not judged; an ask-once gate counts the tool as approved earlier in the
conversation when the call's recorded gate said so.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from approvals.roles import reviewer_roles
from approvals.rules import rules_of_tenant
from core.conf import setting
from kindgi.conditions import parse_condition
from kindgi.gates import RuleGate
from runs.engine.budgets import Budget, BudgetUse, Charge, fits
from runs.engine.entries import EntryKind
from runs.engine.gates import CompiledRules, Gate, GateDecision, Rule
from runs.engine.grants import Grant
from runs.engine.policy import PolicyContext, ProposedCall, charged, gate_facts, gate_of
from runs.engine.sequences import NOTHING_SEEN, After, CallsSeen, calls_seen
from runs.engine.state import CallResult, RunFacts, RunState
from runs.grants import grants_for_tenant
from runs.models import AGENT_TURN_FLOW_ID, JournalKind
from runs.policy_context import agent_gates
from runs.selectors import gated_calls_of_tenant
from tools.mcp.definitions import mcp_tools_for
from tools.registry import get_registry
from tools.selectors import admin_overrides_of_agents

LIMIT = 1000
SHOWN_CHANGES = 100
APPROVED_EARLIER = "approved earlier in this conversation"
# What a gate did or would do, in the words the page uses.
OUTCOMES = {Gate.RUN.value: "ran", Gate.ASK.value: "asked", Gate.REFUSE.value: "denied"}
WOULD = {Gate.RUN.value: "would run", Gate.ASK.value: "would ask", Gate.REFUSE.value: "would deny"}


@dataclass
class JudgedCall:
    run_id: Any
    tool_id: str
    agent_id: str
    arguments: Any
    at: datetime
    happened: str  # ran | asked | denied
    would: str  # ran | asked | denied | "" (could not be judged)
    reason: str  # why, as the simulated gate says
    # A call it would ask about that a standing grant in force now covers: that grant's id.
    granted_by: int | None = None

    @property
    def changed(self) -> bool:
        return bool(self.would) and self.would != self.happened

    @property
    def would_words(self) -> str:
        return dict(zip(OUTCOMES.values(), WOULD.values(), strict=True)).get(self.would, "")


@dataclass
class Simulation:
    days: int
    judged: int
    not_judged: int
    capped: bool  # more calls in the window than LIMIT: the latest LIMIT were judged
    matrix: dict[tuple[str, str], int] = field(default_factory=dict)  # (happened, would) → count
    changes: list[JudgedCall] = field(default_factory=list)
    changed: int = 0
    # Of the calls it would ask about, those a standing grant in force now covers.
    granted: int = 0

    def count(self, happened: str, would: str) -> int:
        return self.matrix.get((happened, would), 0)

    @property
    def rows(self) -> list[tuple[str, list[int], int]]:
        """The matrix as table rows: what happened, the counts of what would, the row's total."""
        outcomes = list(OUTCOMES.values())
        return [
            (
                happened,
                [self.count(happened, would) for would in outcomes],
                sum(self.count(happened, w) for w in outcomes),
            )
            for happened in outcomes
        ]


def draft_rule(fields: dict[str, Any], *, rule_id: int, reviewer_ids: tuple[int, ...] = ()) -> Rule:
    """The engine's view of a rule that is not saved: ``fields`` as ``rule_errors`` accepted them."""
    condition = fields.get("condition") or ""
    after = fields.get("after")
    return Rule(
        id=rule_id,
        name=fields.get("name") or "draft",
        gate=RuleGate(fields["gate"]),
        tool_pattern=fields.get("tool_pattern") or "*",
        agent_pattern=fields.get("agent_pattern") or "*",
        effect_kind=fields.get("effect_kind") or "",
        resource_pattern=fields.get("resource_pattern") or "",
        condition=parse_condition(condition) if condition else None,
        required_role=fields.get("required_role") or "",
        reason=fields.get("reason") or "",
        ttl_seconds=fields.get("ttl_seconds"),
        reviewer_ids=reviewer_ids,
        required_approvals=fields.get("required_approvals") or 1,
        after=After.from_json(after) if after else None,
        budget=Budget.from_json(fields["budget"]) if fields.get("budget") else None,
        step_up=bool(fields.get("step_up")),
    )


def simulate(tenant, draft: Rule | None, *, replacing: int | None, days: int, now: datetime) -> Simulation:
    """Judge the tenant's latest gated calls in the last ``days`` with ``draft`` among its rules,
    in place of rule ``replacing`` or added. ``draft`` None: the rule disabled (or deleted)."""
    rules = [rule for rule in rules_of_tenant(tenant.pk) if rule.id != replacing]
    if draft is not None:
        rules.append(draft)
    rules = CompiledRules(rules)  # judged against each call: indexed once
    entries = gated_calls_of_tenant(tenant, since=now - timedelta(days=days), limit=LIMIT + 1)
    capped = len(entries) > LIMIT
    entries = entries[:LIMIT]
    registry = get_registry()
    agents = {
        (entry.run.agent_key, entry.run.agent_version)
        for entry in entries
        if entry.run.flow_key == AGENT_TURN_FLOW_ID
    }
    overrides = admin_overrides_of_agents(agents, tenant.pk)
    elsewhere = {entry.payload.get("toolId", "") for entry in entries} - {key for key, _ in registry.tools}
    mcp_tools = mcp_tools_for(tenant.pk, tool_ids=elsewhere)
    gates_of_agent = {}
    for key, version in agents:
        agent = registry.agent(key, version)
        gates_of_agent[(key, version)] = (
            agent_gates(agent, tenant.pk, overrides[(key, version)]) if agent else None
        )
    simulation = Simulation(days=days, judged=0, not_judged=0, capped=capped)
    grants = grants_for_tenant(tenant.pk)
    matrix: Counter = Counter()
    named = {(entry.payload or {}).get("toolId", "") for entry in entries}
    history = _History({tool_id: registry.tool(tool_id) or mcp_tools.get(tool_id) for tool_id in named})
    changes = []
    for entry in reversed(entries):  # oldest first: what ran before each call is judged before it
        judged = _judge(entry, rules, registry, gates_of_agent, mcp_tools, history, grants)
        history.saw(entry)
        simulation.granted += judged.granted_by is not None
        if not judged.would:
            simulation.not_judged += 1
            continue
        simulation.judged += 1
        matrix[(judged.happened, judged.would)] += 1
        if judged.changed:
            simulation.changed += 1
            changes.append(judged)
    simulation.changes = changes[::-1][:SHOWN_CHANGES]  # the latest first
    simulation.matrix = dict(matrix)
    return simulation


class _History:
    """The calls that ran, as the simulator has met them so far: by run, and by conversation
    and principal (what a rule's ``after`` looks back at)."""

    def __init__(self, tools: dict):
        self.tools = tools  # every tool the calls name, by id (None: no longer to be found)
        self.by_run: dict[Any, list[CallResult]] = {}
        self.budgets = _ReplayedBudgets()
        self.by_conversation: dict[tuple, dict[Any, list[CallResult]]] = {}

    def saw(self, entry) -> None:
        if entry.kind != JournalKind.TOOL_CALLED:
            return  # refused, or rejected: it did not run
        tool_id = (entry.payload or {}).get("toolId", "")
        done = CallResult(tool_id=tool_id, result=None, kind=EntryKind.TOOL_COMPLETED)
        self.by_run.setdefault(entry.run_id, []).append(done)
        if entry.run.conversation_id is not None:
            turns = self.by_conversation.setdefault(_conversation_of(entry.run), {})
            turns.setdefault(entry.run_id, []).append(done)

    def state_of(self, run_id) -> RunState:
        state = RunState()
        for number, done in enumerate(self.by_run.get(run_id, ())):
            state.results[str(number)] = done
        return state

    def earlier_turns(self, run) -> CallsSeen:
        if run.conversation_id is None:
            return NOTHING_SEEN
        turns = self.by_conversation.get(_conversation_of(run), {})
        others = [done for run_id, calls in turns.items() if run_id != run.pk for done in calls]
        return calls_seen(others, self.tools.get)


class _ReplayedBudgets:
    """The rules' budgets as the judged calls would have used them, in memory, in order
    (``runs.engine.budgets.BudgetLedger``): each charge at the time its call was made."""

    def __init__(self):
        self.charges: dict[tuple[int, str], list[tuple[datetime, float, str]]] = {}
        self.now: datetime | None = None
        self.run_id = None

    def at(self, now: datetime, run_id) -> "_ReplayedBudgets":
        self.now, self.run_id = now, run_id
        return self

    def use(self, charge: Charge) -> BudgetUse:
        window = charge.budget.window_seconds
        since = self.now - timedelta(seconds=window) if window is not None else None
        mine = self._call(charge)
        counted = [
            amount
            for at, amount, call in self.charges.get((charge.rule_id, charge.key), ())
            if call != mine and (since is None or at > since)
        ]
        total = sum(counted)
        return BudgetUse(
            calls=len(counted),
            total=total,
            fits=fits(charge.budget, calls=len(counted), total=total, amount=charge.amount),
        )

    def charge(self, charge: Charge, *, even_over: bool = False) -> BudgetUse:
        use = self.use(charge)
        if use.fits or even_over:
            self.charges.setdefault((charge.rule_id, charge.key), []).append(
                (self.now, charge.amount, self._call(charge))
            )
        return use

    def release(self, charge: Charge) -> None:
        mine = self._call(charge)
        kept = [row for row in self.charges.get((charge.rule_id, charge.key), ()) if row[2] != mine]
        self.charges[charge.rule_id, charge.key] = kept

    def _call(self, charge: Charge) -> str:
        return f"{self.run_id}:{charge.call_id}"


def _conversation_of(run) -> tuple:
    return (run.conversation_id, run.principal_id)


def _judge(
    entry,
    rules: list[Rule],
    registry,
    gates_of_agent: dict,
    mcp_tools: dict,
    history: _History,
    grants: Sequence[Grant] = (),
) -> JudgedCall:
    payload, run = entry.payload or {}, entry.run
    recorded = payload.get("gate") or {}
    is_agent = run.flow_key == AGENT_TURN_FLOW_ID
    tool_id = payload.get("toolId", "")
    arguments = payload.get("arguments")
    judged = JudgedCall(
        run_id=entry.run_id,
        tool_id=tool_id,
        agent_id=run.agent_key if is_agent else "",
        arguments=arguments,
        at=entry.created_at,
        happened=OUTCOMES.get(recorded.get("gate", ""), "ran"),
        would="",
        reason="",
    )
    # A refusal names no version: the latest. An MCP server's tool is found among the tenant's.
    tool = registry.tool(tool_id, payload.get("toolVersion")) or mcp_tools.get(tool_id)
    agent = gates_of_agent.get((run.agent_key, run.agent_version)) if is_agent else None
    if tool is None or (is_agent and agent is None):
        judged.reason = "its tool or agent is no longer in the packs"
        return judged
    ctx = PolicyContext(
        run=RunFacts(
            id=str(run.pk),
            principal=str(run.principal_id) if run.principal_id else None,
            conversation_id=str(run.conversation_id or ""),
        ),
        tools={},
        run_tools=history.tools,
        agent_id=judged.agent_id,
        agent_gates=agent,
        rules=rules,
        earlier_turns=history.earlier_turns(run),
        budgets=history.budgets.at(entry.created_at, run.pk),
    )
    approved = {tool_id} if APPROVED_EARLIER in recorded.get("reason", "") else set()
    call = ProposedCall(call_id=payload.get("callId", ""), tool_id=tool_id, arguments=arguments, tool=tool)
    state = history.state_of(run.pk)
    decision: GateDecision = gate_of(call, tool, ctx, approved, state)
    if decision.gate != Gate.REFUSE:
        decision = charged(call, decision, ctx)[1]
    if decision.gate == Gate.ASK and grants:
        facts = gate_facts(call, tool, ctx, state)
        roles, four_eyes = reviewer_roles(), setting("KINDGI_FOUR_EYES")
        judged.granted_by = next(
            (g.id for g in grants if g.covers(facts, ctx.run, decision, roles=roles, four_eyes=four_eyes)),
            None,
        )
    judged.would, judged.reason = OUTCOMES[decision.gate.value], decision.reason
    return judged
