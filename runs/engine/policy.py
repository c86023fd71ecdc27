"""The call policy: the one door every tool call passes through before it runs.

An agent's call, a flow's tool step, a call a reviewer edited (again, when the run resumes, and
before the decision is taken) and a call repeated after a crash all go through ``prepare``.
Read ``STEPS`` top to bottom to see every reason a call might not run. Each step looks at the
call, the run's state and the context, and either passes the call on (perhaps narrowed: its
tool found, its arguments validated, the gate that let it through) or says why not:

- ``Refused``: the call does not run; its result, as data, says why (the model reads it; a
  flow fails with ``failure``);
- ``Stop``: the run fails here (a dry run met a tool that is not read-only);
- ``Suspend``: the run waits on a waitpoint (a person's approval) before the call can run.

No step writes anything. The caller records what ``prepare`` returns.
"""

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pydantic import BaseModel

from kindgi import BeforeToolGuardrail, GuardedCall, ToolConnection, ToolDefinition
from kindgi.gates import RuleGate
from runs.engine.budgets import BudgetLedger, Charge, amount_of, scope_key
from runs.engine.entries import Entry, EntryKind
from runs.engine.gates import (
    AgentGates,
    CallFacts,
    Gate,
    GateDecision,
    Rule,
    decide_gate,
    scopes_looked_back,
    strictest_ask,
)
from runs.engine.grants import Grant, GrantKeeper
from runs.engine.invocation import InvalidArguments, check_arguments, error_data
from runs.engine.limits import DEFAULT_LIMITS, Limits
from runs.engine.sequences import CONVERSATION, NOTHING_EARLIER, NOTHING_SEEN, CallsSeen, Earlier, calls_seen
from runs.engine.state import RunFacts, RunState
from runs.engine.waitpoints import (
    APPROVE,
    CHANGES_REQUESTED,
    REQUEST_CHANGES,
    approval_waitpoint,
    call_digest,
    connection_required_waitpoint,
    connection_use_waitpoint,
    interrupted_waitpoint,
)

TOOL_NOT_ALLOWED = "TOOL_NOT_ALLOWED"
TOOL_INTERRUPTED = "TOOL_INTERRUPTED"
GUARDRAIL_REFUSED = "GUARDRAIL_REFUSED"
APPROVAL_MISMATCH = "APPROVAL_MISMATCH"

DRY_RUN_REFUSAL = (
    'dry-run-effectful-tool: tool "{tool_id}" is not declared read-only (mutating: false), '
    "so it does not run in a dry run"
)
READ_ONLY_RUN_REFUSAL = (
    'read-only-run: tool "{tool_id}" is not read-only, so it does not run in a read-only run'
)


@dataclass(frozen=True, kw_only=True)
class ProposedCall:
    """A call someone asks to run, and what the steps have found out about it so far."""

    call_id: str
    tool_id: str
    # As asked; once the arguments step passes, as validated and dumped to JSON again.
    arguments: Any
    node_id: str = ""
    # The model's own arguments, when a reviewer approved edited ones (``arguments``) instead.
    model_arguments: Any = None
    # The tool messages of the same model message's calls that ran before this one.
    earlier_results: tuple[Mapping[str, Any], ...] = ()
    tool: ToolDefinition | None = None
    validated: BaseModel | None = None
    gate: GateDecision | None = None
    # The person's approval this call runs under, if it waited for one.
    approval: Mapping[str, Any] | None = None
    # Entries the steps made on the way (guardrail judgements): recorded whatever the verdict.
    notes: tuple[Entry, ...] = ()
    # The connection the call acts through, for a tool that declares one.
    connection: ToolConnection | None = None
    # What the call was charged to a rule's budget as it passed the gate (released if it then
    # does not run).
    charge: Charge | None = None


@dataclass(frozen=True)
class Pass:
    call: ProposedCall


@dataclass(frozen=True)
class Ready:
    call: ProposedCall


@dataclass(frozen=True, kw_only=True)
class Refused:
    call: ProposedCall
    reason: str
    result: Any
    failure: str
    kind: str = EntryKind.TOOL_REFUSED
    # For invalid arguments: each bad field, ``/<json-pointer>: <message>``.
    errors: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class Stop:
    message: str


@dataclass(frozen=True, kw_only=True)
class Suspend:
    call: ProposedCall
    waitpoint: dict[str, Any]
    gate: GateDecision | None = None


Verdict = Ready | Refused | Stop | Suspend


@dataclass(frozen=True, kw_only=True)
class PolicyContext:
    """What the policy judges a run's calls against; the driver gathers it once per execution."""

    run: RunFacts
    # The tools the agent or flow may call, by id (None: referenced, but not loaded).
    tools: Mapping[str, ToolDefinition | None]
    # An agent's retrieval sources, by id: called by the turn itself before the model's first
    # step, never by the model (they are not among ``tools`` unless the agent lists them there).
    retrieval: Mapping[str, ToolDefinition] = field(default_factory=dict)
    agent_id: str = ""
    # None for a flow's tool step, which has no agent gate.
    agent_gates: AgentGates | None = None
    guardrails: tuple[BeforeToolGuardrail, ...] = ()
    rules: Sequence[Rule] = ()
    # Tools a person approved earlier in the conversation (for ask-once gates).
    approved_tools: Collection[str] = field(default_factory=frozenset)
    # The connections the run may use, by app: those of the person whose each app's is
    # (``connection_owner``), where they have one that works.
    connections: Mapping[str, ToolConnection] = field(default_factory=dict)
    # Tools of the agent or flow that may not be called now (among ``tools`` as None), and why:
    # an MCP server's tool whose change no one has approved yet.
    held: Mapping[str, str] = field(default_factory=dict)
    # The reviewer roles, lowest first (the site's ``KINDGI_REVIEWER_ROLES``): how the policy
    # tells which of two gates needs the higher role.
    reviewer_roles: Sequence[str] = ()
    # The site's limits (``runs.policy_context.engine_limits``).
    limits: Limits = DEFAULT_LIMITS
    # Every tool the run may call, by id, where a flow's step context holds only its own: how
    # the gate finds what an earlier call touched. Empty: ``tools`` and ``retrieval`` are all.
    run_tools: Mapping[str, ToolDefinition | None] = field(default_factory=dict)
    # What the conversation's earlier turns ran (its principal's), when a rule looks back at the
    # conversation (``runs.engine.sequences``).
    earlier_turns: CallsSeen = NOTHING_SEEN
    # Where the rules' budgets are kept: the driver's, for an execution. None where calls are
    # only judged (an edit before its decision, the simulator): budgets then change no gate.
    budgets: BudgetLedger | None = None
    # The tenant's standing grants, and where their uses are counted (None: judged only).
    grants: Sequence[Grant] = ()
    grant_keeper: GrantKeeper | None = None
    # The site's KINDGI_FOUR_EYES: a grant never covers its granter's own runs then.
    four_eyes: bool = False


Step = Callable[[ProposedCall, RunState, PolicyContext], Pass | Verdict]


def proposed(
    *, call_id: str, tool_id: str, arguments: Any, state: RunState, node_id: str = "", **more: Any
) -> ProposedCall:
    """The call to judge: the model's (or the flow's) arguments, unless a reviewer approved the
    call with edited ones, which are then judged as if the model had asked for them."""
    resolution = state.resolutions.get(call_id) or {}
    if resolution.get("decision") == APPROVE and "arguments" in resolution:
        return ProposedCall(
            call_id=call_id,
            tool_id=tool_id,
            arguments=resolution["arguments"],
            model_arguments=arguments,
            node_id=node_id,
            **more,
        )
    return ProposedCall(call_id=call_id, tool_id=tool_id, arguments=arguments, node_id=node_id, **more)


def prepare(
    call: ProposedCall, state: RunState, ctx: PolicyContext, steps: Sequence[Step] | None = None
) -> Verdict:
    for step in STEPS if steps is None else steps:
        verdict = step(call, state, ctx)
        if not isinstance(verdict, Pass):
            if isinstance(verdict, Refused | Stop):
                _give_back(verdict.call if isinstance(verdict, Refused) else call, ctx)
            return verdict
        call = verdict.call
    return Ready(call)


def _give_back(call: ProposedCall, ctx: PolicyContext) -> None:
    """A call that passed its gate will not run after all: it stops counting against its rule's
    budget, and gives back the use of the grant that let it run."""
    if call.charge is not None and ctx.budgets is not None:
        ctx.budgets.release(call.charge)
    if call.gate is not None and call.gate.grant_id is not None and ctx.grant_keeper is not None:
        ctx.grant_keeper.release(call.gate.grant_id, run_id=ctx.run.id, call_id=call.call_id)


def gate_facts(call: ProposedCall, tool: ToolDefinition, ctx: PolicyContext, state: RunState) -> CallFacts:
    arguments = call.arguments
    return CallFacts(
        tool_id=tool.id,
        agent_id=ctx.agent_id,
        read_only=tool.is_read_only,
        effects=tuple((effect.kind.value, effect.resource) for effect in tool.effects),
        arguments=arguments if isinstance(arguments, Mapping) else {},
        earlier=earlier_calls(state, ctx),
    )


def earlier_calls(state: RunState, ctx: PolicyContext) -> Earlier:
    """What ran before a call, as far as the tenant's rules look back: nothing is gathered for a
    tenant none of whose rules has an ``after``."""
    scopes = scopes_looked_back(ctx.rules)
    if not scopes:
        return NOTHING_EARLIER

    def tool_of(tool_id: str) -> ToolDefinition | None:
        return ctx.run_tools.get(tool_id) or ctx.tools.get(tool_id) or ctx.retrieval.get(tool_id)

    in_run = calls_seen(state.results.values(), tool_of)
    return Earlier(run=in_run, conversation=ctx.earlier_turns if CONVERSATION in scopes else NOTHING_SEEN)


def gate_of(
    call: ProposedCall, tool: ToolDefinition, ctx: PolicyContext, approved: Collection[str], state: RunState
) -> GateDecision:
    return decide_gate(
        call=gate_facts(call, tool, ctx, state),
        agent=ctx.agent_gates,
        rules=ctx.rules,
        approved_tools=approved,
    )


def _not_allowed(call: ProposedCall, reason: str, failure: str, **more: Any) -> Refused:
    result = error_data(
        TOOL_NOT_ALLOWED,
        f'Tool "{call.tool_id}" is not allowed here: {reason}.',
        retryable=False,
        recommended_action="Do not call this tool in this run.",
    )
    return Refused(call=call, reason=reason, result=result, failure=failure, **more)


# The steps, in order.


def run_policy(call: ProposedCall, state: RunState, ctx: PolicyContext) -> Pass | Verdict:
    """A dry run stops at a tool that is not read-only; a read-only run refuses one."""
    tool = ctx.tools.get(call.tool_id)
    if tool is None or tool.is_read_only:
        return Pass(call)  # an unknown tool is the next step's to refuse
    if ctx.run.dry_run:
        return Stop(message=DRY_RUN_REFUSAL.format(tool_id=tool.id))
    if ctx.run.read_only:
        reason = f'run policy: this is a read-only run and tool "{tool.id}" is not read-only'
        return _not_allowed(call, reason, READ_ONLY_RUN_REFUSAL.format(tool_id=tool.id))
    return Pass(call)


def tool_known(call: ProposedCall, state: RunState, ctx: PolicyContext) -> Pass | Verdict:
    tool = ctx.tools.get(call.tool_id)
    if tool is not None:
        return Pass(replace(call, tool=tool))
    where = f'node "{call.node_id}": ' if call.node_id else ""
    if held := ctx.held.get(call.tool_id):
        return _not_allowed(call, held, f'{where}tool "{call.tool_id}" is {held}')
    result = error_data(
        TOOL_NOT_ALLOWED,
        f'"{call.tool_id}" is not one of this agent\'s tools.',
        retryable=False,
        recommended_action="Use only the tools you were given.",
    )
    known = call.tool_id in ctx.tools
    return Refused(
        call=call,
        reason="not loaded" if known else "not one of the agent's tools",
        result=result,
        failure=f'{where}tool "{call.tool_id}" is not loaded',
    )


def arguments_valid(call: ProposedCall, state: RunState, ctx: PolicyContext) -> Pass | Verdict:
    checked = check_arguments(call.tool, call.arguments, ctx.limits)
    if not isinstance(checked, InvalidArguments):
        arguments = checked.model_dump(mode="json", by_alias=True)
        return Pass(replace(call, validated=checked, arguments=arguments))
    result = checked.as_data()
    where = f'node "{call.node_id}": ' if call.node_id else ""
    return Refused(
        call=call,
        reason="invalid arguments",
        result=result,
        failure=f'tool-failed: {where}tool "{call.tool_id}" returned INVALID_TOOL_INPUT: '
        + result["error"]["message"],
        kind=EntryKind.TOOL_FAILED,
        errors=checked.errors,
    )


def recovery(call: ProposedCall, state: RunState, ctx: PolicyContext) -> Pass | Verdict:
    """A call that started and never finished may have had its effect: it repeats on its own
    only if its tool is idempotent; otherwise a person decides, one who could have let it run
    (``repeat_needs``): repeating it is no easier than running it was."""
    tool = call.tool
    if call.call_id not in state.called or tool.idempotent:
        return Pass(call)
    decided = state.recoveries.get(call.call_id)
    if decided is None:
        needs, needed_by = repeat_needs(call, state, ctx)
        waitpoint = interrupted_waitpoint(
            call_id=call.call_id,
            tool_id=tool.id,
            tool_version=tool.version,
            arguments=call.arguments,
            needs=needs,
            needed_by=needed_by,
        )
        return Suspend(call=call, waitpoint=waitpoint)
    if decided.get("decision") == APPROVE:
        return Pass(call)
    result = error_data(
        TOOL_INTERRUPTED,
        f'The call to "{tool.id}" was interrupted before its result was recorded and was not '
        "repeated: whether it took effect is unknown (stateChanged is null).",
        retryable=False,
        recommended_action="Check whether it took effect before calling it again.",
    )
    result["stateChanged"] = None  # not false: it may have changed something
    node = f'node "{call.node_id}" called ' if call.node_id else "the call to "
    return Refused(
        call=call,
        reason="interrupted, and a reviewer chose not to repeat it",
        result=result,
        failure=f'interrupted-tool-call: {node}tool "{tool.id}", which is not idempotent, and stopped '
        "before recording its result; a reviewer chose not to repeat it",
    )


def repeat_needs(call: ProposedCall, state: RunState, ctx: PolicyContext) -> tuple[dict[str, Any], str]:
    """What the approval to repeat an interrupted call needs at least, and whence: what the
    approval that let it run needed (as escalation left it), and what its gate would ask now if
    it asks; both, the stricter (the original approval's named reviewers, if it named any)."""
    gates, whence = [], []
    approved = state.approved_gates.get(call.call_id)
    if approved is not None:
        gates.append(approved)
        whence.append("the approval that let it run")
    now = gate_of(call, call.tool, ctx, ctx.approved_tools, state)
    if now.gate == Gate.ASK:
        gates.append(now.to_dict())
        whence.append(f"its gate now: {now.reason}")
    return strictest_ask(gates, roles=ctx.reviewer_roles), "; ".join(whence)


def gate(call: ProposedCall, state: RunState, ctx: PolicyContext) -> Pass | Verdict:
    """The stricter of the agent's and the tenant's gate. A tenant's deny refuses the call even
    after a person approved it; a person's rejection refuses it whatever the gate says now."""
    decision = gate_of(call, call.tool, ctx, ctx.approved_tools, state)
    gated = replace(call, gate=decision)
    if decision.gate == Gate.REFUSE:
        why = f": {decision.rule_reason}" if decision.rule_reason else ""
        failure = f'tool-denied: tool "{call.tool_id}" is denied by rule "{decision.rule_name}"{why}'
        return _not_allowed(gated, decision.reason, failure)
    resolution = state.resolutions.get(call.call_id)
    if resolution is not None:
        if resolution.get("decision") == APPROVE:
            # A person approved it: it counts, over its budget or not.
            counted = charged(gated, decision, ctx, even_over=True)[0]
            return Pass(replace(counted, approval=resolution))
        rationale = resolution.get("rationale", "")
        reviewer = resolution.get("reviewer") or "nobody (it expired)"
        if resolution.get("decision") == REQUEST_CHANGES:
            return Refused(
                call=gated,
                reason=f"{reviewer} asked for changes",
                result={"status": CHANGES_REQUESTED, "note": rationale},
                failure=f'tool-changes-requested: tool "{call.tool_id}": {reviewer} asked for changes: '
                f"{rationale}",
            )
        return Refused(
            call=gated,
            reason="rejected by a reviewer",
            result={"status": "rejected", "rationale": rationale},
            failure=f'tool-rejected: tool "{call.tool_id}" was rejected by {reviewer}: {rationale}',
        )
    gated, decision = charged(gated, decision, ctx)
    if decision.gate == Gate.ASK:
        gated, decision = _granted(gated, decision, state, ctx)
    gated = replace(gated, gate=decision)
    if decision.gate == Gate.REFUSE:
        failure = f'tool-denied: tool "{call.tool_id}" is over the budget of rule "{decision.rule_name}"'
        return _not_allowed(gated, decision.reason, f"{failure}: {decision.rule_reason}")
    if decision.gate == Gate.ASK:
        tool = call.tool
        waitpoint = approval_waitpoint(
            call_id=call.call_id,
            tool_id=tool.id,
            tool_version=tool.version,
            arguments=call.arguments,
            gate=decision.to_dict(),
        )
        return Suspend(call=gated, waitpoint=waitpoint, gate=decision)
    return Pass(gated)


def charged(
    call: ProposedCall, decision: GateDecision, ctx: PolicyContext, *, even_over: bool = False
) -> tuple[ProposedCall, GateDecision]:
    """The call and its gate once the matching rule's budget has had its say: a call that runs
    within it is charged to it; one it would take over the budget takes the budget's
    ``overBudget`` gate instead, saying how much is used; a call that asks says so too. A call
    ``even_over`` (a person approved it) is charged whatever it takes."""
    rule = decision.rule
    if rule is None or rule.budget is None or ctx.budgets is None:
        return call, decision
    budget = rule.budget
    amount = amount_of(budget, call.arguments)
    charge = Charge(
        rule_id=rule.id,
        budget=budget,
        key=scope_key(
            budget,
            run_id=ctx.run.id,
            conversation_id=ctx.run.conversation_id,
            principal=ctx.run.principal or "",
            agent_id=ctx.agent_id,
        ),
        call_id=call.call_id,
        amount=amount or 0,
    )
    if even_over:
        ctx.budgets.charge(charge, even_over=True)
        return replace(call, charge=charge), decision
    if amount is None:
        return call, over_budget(
            decision, rule, f"{budget.sum_of} is not a number of zero or more in its arguments"
        )
    if decision.gate == Gate.RUN:
        use = ctx.budgets.charge(charge)
        if use.fits:
            return replace(call, charge=charge), decision
    else:
        use = ctx.budgets.use(charge)
        if use.fits:
            return call, replace(decision, reason=f"{decision.reason}; budget: {use.describe(charge)}")
    return call, over_budget(decision, rule, use.describe(charge))


def _granted(
    call: ProposedCall, decision: GateDecision, state: RunState, ctx: PolicyContext
) -> tuple[ProposedCall, GateDecision]:
    """The call and its gate once the tenant's standing grants have had their say: let run by the
    first grant that covers it and whose use its keeper counts, or still asking as it did.

    A grant stands in for a person's yes, never for a budget: a covered call is charged to its
    rule's budget as a call that runs is, checked under the budget's lock, and one that would go
    over takes the budget's ``overBudget`` gate (asking a person, or refused) without using the
    grant. So concurrent granted calls cannot together pass a budget."""
    if not ctx.grants or ctx.grant_keeper is None:
        return call, decision
    facts = gate_facts(call, call.tool, ctx, state)
    covering = [
        grant
        for grant in ctx.grants
        if grant.covers(facts, ctx.run, decision, roles=ctx.reviewer_roles, four_eyes=ctx.four_eyes)
    ]
    if not covering:
        return call, decision
    counted, checked = charged(call, replace(decision, gate=Gate.RUN), ctx)
    if checked.gate != Gate.RUN:
        return call, checked
    needed = decision.required_role or (ctx.reviewer_roles[0] if ctx.reviewer_roles else "")
    for grant in covering:
        used = ctx.grant_keeper.use(
            grant,
            run_id=ctx.run.id,
            call_id=call.call_id,
            amount=grant.amount(facts) or 0,
            needed_role=needed,
        )
        if used:
            granted = replace(
                checked,
                reason=f"granted by {grant.granter_name} (grant {grant.id}), in place of: {decision.reason}",
                grant_id=grant.id,
            )
            return counted, granted
    if counted.charge is not None and ctx.budgets is not None:
        ctx.budgets.release(counted.charge)  # no grant let it run after all: it asks, uncharged
    return call, decision


def over_budget(decision: GateDecision, rule: Rule, use: str) -> GateDecision:
    """The gate of a call over ``rule``'s budget: its ``overBudget``, asking as the rule asks."""
    reason = f"{rule.describe()}; over budget: {use}"  # the agent's side let it run
    if rule.budget is not None and rule.budget.over_budget == RuleGate.DENY:
        return GateDecision(
            gate=Gate.REFUSE,
            code=TOOL_NOT_ALLOWED,
            reason=reason,
            rule_reason=f"over budget: {use}",
            rule_id=rule.id,
            rule_name=rule.name,
            rule=rule,
        )
    return replace(
        decision,
        gate=Gate.ASK,
        reason=reason,
        required_role=decision.required_role or rule.required_role,
        ttl_seconds=decision.ttl_seconds or rule.ttl_seconds,
        reviewer_ids=decision.reviewer_ids or rule.reviewer_ids,
        required_approvals=max(decision.required_approvals, rule.required_approvals),
        step_up=decision.step_up or rule.step_up,
    )


def guardrails(call: ProposedCall, state: RunState, ctx: PolicyContext) -> Pass | Verdict:
    """Each of the agent's before-tool guardrails for this tool judges the call; a guardrail that
    breaks refuses it (fail closed)."""
    notes = list(call.notes)
    for guardrail in ctx.guardrails:
        if not guardrail.applies_to(call.tool_id):
            continue
        guarded = GuardedCall(
            call_id=call.call_id,
            tool_id=call.tool_id,
            arguments=call.arguments,
            run_id=ctx.run.id,
            earlier_results=call.earlier_results,
        )
        try:
            judgement = guardrail.judge(guarded)
            allowed, reason = bool(judgement.allowed), judgement.reason
        except Exception as error:
            allowed, reason = False, f"the guardrail failed ({type(error).__name__})"
        notes.append(
            Entry(
                kind=EntryKind.GUARDRAIL_JUDGED,
                node_id=call.node_id,
                payload={
                    "callId": call.call_id,
                    "toolId": call.tool_id,
                    "guardrail": guardrail.name,
                    "allowed": allowed,
                    "reason": reason,
                },
            )
        )
        if not allowed:
            result = error_data(
                GUARDRAIL_REFUSED,
                reason or "A guardrail refused this call.",
                retryable=False,
                recommended_action="Change the call as the reason says, or tell the user why not.",
            )
            judged = replace(call, notes=tuple(notes))
            return Refused(
                call=judged,
                reason=f"refused by guardrail {guardrail.name}",
                result=result,
                failure=f'guardrail-refused: tool "{call.tool_id}": {reason}',
            )
    return Pass(replace(call, notes=tuple(notes)))


def connection_owner(run: RunFacts, app: str) -> str | None:
    """Whose connection to ``app`` the run's calls use: its principal, when they started it
    themselves; in a run no person started, whoever its start named for the app (None: no one)."""
    if run.person_started:
        return run.principal
    return run.connection_owners.get(app)


CONNECTION_REFUSED = "CONNECTION_REFUSED"


def connection(call: ProposedCall, state: RunState, ctx: PolicyContext) -> Pass | Verdict:
    """A tool that acts through an app uses one person's connection to it (``connection_owner``).
    In a run no person started, that person says yes first, even to a read-only call; their yes
    covers the rest of the run, their no refuses this call. A person who has not connected the
    app (or whose connection stopped working) is asked to, and the run waits until they have."""
    app = call.tool.connection
    if not app:
        return Pass(call)
    owner = connection_owner(ctx.run, app)
    if owner is None:
        reason = f'no person started this run, and its start named no one\'s connection to "{app}"'
        return _not_allowed(call, reason, f'connection-unavailable: tool "{call.tool_id}": {reason}')
    if not ctx.run.person_started and state.connection_consents.get(app) != owner:
        refusal = state.connection_refusals.get(call.call_id)
        if refusal is None:
            tool = call.tool
            waitpoint = connection_use_waitpoint(
                call_id=call.call_id,
                tool_id=tool.id,
                tool_version=tool.version,
                arguments=call.arguments,
                app=app,
                owner_id=owner,
            )
            return Suspend(call=call, waitpoint=waitpoint)
        who = refusal.get("reviewer") or "nobody (it expired)"
        rationale = refusal.get("rationale", "")
        result = error_data(
            CONNECTION_REFUSED,
            f'{who} did not allow this call to use their connection to "{app}": {rationale}',
            retryable=False,
            recommended_action="Do not use this connection again in this run unless the user asks.",
        )
        result["status"] = "rejected"
        return Refused(
            call=call,
            reason=f"the owner of the connection to {app} said no",
            result=result,
            failure=f'connection-refused: tool "{call.tool_id}": {who} did not allow the use of '
            f'their connection to "{app}": {rationale}',
        )
    chosen = ctx.connections.get(app)
    if chosen is None:
        waitpoint = connection_required_waitpoint(
            call_id=call.call_id, tool_id=call.tool_id, app=app, owner_id=owner
        )
        return Suspend(call=call, waitpoint=waitpoint)
    return Pass(replace(call, connection=chosen))


def bound_to_approval(call: ProposedCall, state: RunState, ctx: PolicyContext) -> Pass | Verdict:
    """A call that waited for a person runs only as they approved it: the same tool, version
    and arguments (the digest the decision recorded)."""
    if call.approval is None:
        return Pass(call)
    tool = call.tool
    if call_digest(tool.id, tool.version, call.arguments) == call.approval.get("digest"):
        return Pass(call)
    reason = "the call does not match what the reviewer approved"
    result = error_data(
        APPROVAL_MISMATCH,
        f'The call to "{tool.id}" does not match what was approved, so it did not run.',
        retryable=False,
        recommended_action="Tell the user the approved call could not run as approved.",
    )
    return Refused(
        call=call, reason=reason, result=result, failure=f'approval-mismatch: tool "{tool.id}": {reason}'
    )


STEPS: tuple[Step, ...] = (
    run_policy,
    tool_known,
    arguments_valid,
    recovery,
    gate,
    guardrails,
    connection,
    bound_to_approval,
)

# What a decision checks of a reviewer's edited call before it is taken: whether it would be
# allowed and who could approve it. (Recovery, guardrails and the binding apply when it runs.)
EDIT_STEPS: tuple[Step, ...] = (run_policy, tool_known, arguments_valid, gate)
