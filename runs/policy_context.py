"""What the call policy judges a run's calls against, gathered from the database; and a
reviewer's edited call judged before the decision is taken.

The executor builds the policy context here for every execution, and the approvals app asks
``judge_edited_call`` about an edit: both go through the same steps of the same policy. A
decision that judged an edit hands the context it built to the execution it resumes here, which
adds only the run's connections: those are read (and an expired token refreshed, which the app
cannot take back) as the execution starts, never inside a decision's transaction.
"""

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, NamedTuple

from django.conf import settings

from core.conf import setting
from kindgi import AgentDefinition, FlowDefinition, Registry, ToolDefinition
from kindgi.conditions import parse_condition
from kindgi.flows import NodeKind
from runs import policy_cache
from runs.connection_sources import connections_for_run
from runs.engine.flow import step_context
from runs.engine.gates import AgentGates, CompiledRules, Override, code_overrides, scopes_looked_back
from runs.engine.limits import Limits
from runs.engine.policy import EDIT_STEPS, PolicyContext, ProposedCall, Verdict, connection_owner, prepare
from runs.engine.sequences import CONVERSATION, NOTHING_SEEN, CallsSeen, calls_seen
from runs.engine.state import RunFacts, RunState
from runs.engine.turn import RETRIEVAL_CALL
from runs.exceptions import RunStateError
from runs.models import Run, Trigger
from runs.principals import principal_of
from runs.selectors import conversation_approvals, conversation_calls, conversation_history, run_journal
from tools.mcp.definitions import mcp_tools_for
from tools.registry import get_registry
from tools.selectors import agent_admin_overrides


def agent_gates(
    agent: AgentDefinition, tenant_id, admin_overrides: dict[str, tuple[str, str]] | None = None
) -> AgentGates:
    """The agent's overrides by tool id: the code's, replaced by an admin's where one set one for
    the site or for ``tenant_id``'s runs (the tenant's own winning). ``admin_overrides``: those,
    when already read (``admin_overrides_of_agents``)."""
    overrides = code_overrides(agent)
    if admin_overrides is None:
        admin_overrides = agent_admin_overrides(agent.id, agent.version, tenant_id)
    for tool_id, (gate, condition) in admin_overrides.items():
        overrides[tool_id] = Override(
            gate=gate,
            source="admin",
            when=parse_condition(condition).holds if condition else None,
            when_text=condition,
        )
    return AgentGates(enabled=agent.gates_enabled, overrides=overrides)


def named_connection_owners(run: Run) -> dict[str, str]:
    """Whose connection each app's calls use in a run no person started, as its start named
    them: app -> user id."""
    return {app: str(owner["userId"]) for app, owner in (run.connection_owners or {}).items()}


def run_facts(run: Run) -> RunFacts:
    history = conversation_history(run) if run.is_agent_turn and not run.messages else ()
    principal = principal_of(run)
    person_started = run.trigger == Trigger.PERSON
    return RunFacts(
        id=str(run.pk),
        tenant_id=str(run.tenant_id),
        tenant_slug=run.tenant.slug,
        dry_run=run.dry_run,
        read_only=run.read_only,
        principal=str(principal) if principal is not None else None,
        conversation_id=str(run.conversation_id or ""),
        person_started=person_started,
        connection_owners={} if person_started else named_connection_owners(run),
        input=run.input,
        messages=run.messages,
        history=history,
    )


def target_of(run: Run, registry: Registry) -> AgentDefinition | FlowDefinition | None:
    """The agent or flow the run runs, or None when it is no longer in the packs."""
    if run.is_agent_turn:
        return registry.agent(run.agent_key, run.agent_version)
    return registry.flow(run.flow_key, run.flow_version)


def missing_here(run: Run, registry: Registry | None = None) -> str | None:
    """Why this process cannot execute ``run`` (its agent or flow is not in the packs it loaded),
    or None. A sweep run from a shell with other KINDGI_PACKS must leave such a run alone, not
    fail it."""
    registry = registry or get_registry()
    if target_of(run, registry) is not None:
        return None
    what = (
        f"agent {run.agent_key}@{run.agent_version}"
        if run.is_agent_turn
        else f"flow {run.flow_key}@{run.flow_version}"
    )
    packs = ", ".join(settings.KINDGI_PACKS)
    return f"run {run.pk}: {what} is not in this process's packs (KINDGI_PACKS: {packs})"


# Each of the kernel's limits, and the setting it is read from.
LIMIT_SETTINGS = {
    "max_json_depth": "KINDGI_MAX_JSON_DEPTH",
    "max_tool_arguments_bytes": "KINDGI_MAX_TOOL_ARGUMENTS_BYTES",
    "max_model_steps": "KINDGI_MAX_MODEL_STEPS",
    "model_attempts": "KINDGI_MODEL_ATTEMPTS",
    "model_retry_delay_seconds": "KINDGI_MODEL_RETRY_DELAY_SECONDS",
}


def engine_limits() -> Limits:
    """The site's limits, as the kernel takes them."""
    return Limits(**{field: setting(name) for field, name in LIMIT_SETTINGS.items()})


def policy_context(
    run: Run, target: AgentDefinition | FlowDefinition, *, registry: Registry, connected: bool = True
) -> PolicyContext:
    """What ``run``'s calls are judged against; without its connections unless ``connected``
    (``with_connections`` adds them)."""
    facts = run_facts(run)
    version = run.tenant.config_version  # read with the run: a cache hit costs no statement
    rules = policy_cache.tenant_rules(run.tenant_id, version)
    roles = tuple(setting("KINDGI_REVIEWER_ROLES"))  # lowest first: the kernel reads no settings
    if isinstance(target, FlowDefinition):
        # A flow's tool steps have no agent gate; each step names its own tool (flow.step_context),
        # found in the packs or, here, among the MCP tools the tenant may use.
        mcp_tools, held = callable_now(flow_mcp_tools(target, run.tenant_id, registry=registry))
        steps = {tool.id: tool for tool in flow_step_tools(target, registry) if tool is not None}
        context = PolicyContext(
            run=facts,
            tools=mcp_tools,
            grants=policy_cache.tenant_grants(run.tenant_id, version),
            four_eyes=setting("KINDGI_FOUR_EYES"),
            run_tools=mcp_tools | steps,
            held=held,
            rules=rules,
            reviewer_roles=roles,
            limits=engine_limits(),
        )
        return with_connections(context, run, target, registry=registry) if connected else context
    tools, held = callable_now(agent_tools(target, run.tenant_id, registry=registry))
    context = PolicyContext(
        run=facts,
        tools=tools,
        held=held,
        retrieval=retrieval_tools(target, registry=registry),
        agent_id=target.id,
        agent_gates=agent_gates(
            target,
            run.tenant_id,
            policy_cache.admin_overrides(target.id, target.version, run.tenant_id, version),
        ),
        guardrails=target.guardrails,
        rules=rules,
        approved_tools=frozenset(conversation_approvals(run)),
        reviewer_roles=roles,
        limits=engine_limits(),
        earlier_turns=earlier_turns(run, tools, rules),
        grants=policy_cache.tenant_grants(run.tenant_id, version),
        four_eyes=setting("KINDGI_FOUR_EYES"),
    )
    return with_connections(context, run, target, registry=registry) if connected else context


def with_connections(
    context: PolicyContext, run: Run, target: AgentDefinition | FlowDefinition, *, registry: Registry
) -> PolicyContext:
    """``context`` with the connections ``run``'s calls may act through: read only for runs
    whose tools use one, and refreshed if expired, so only as an execution starts."""
    if isinstance(target, FlowDefinition):
        tools = flow_step_tools(target, registry)
    else:
        tools = context.tools.values()
    apps = {tool.connection for tool in tools if tool is not None and tool.connection}
    owners = {app: owner for app in apps if (owner := connection_owner(context.run, app)) is not None}
    return replace(context, connections=connections_for_run(run, owners))


def flow_step_tools(flow: FlowDefinition, registry: Registry) -> list[ToolDefinition | None]:
    """The packs' tools of the flow's tool steps (None for one that is not in them)."""
    return [registry.tool(node.target, node.version) for node in flow.nodes if node.kind == NodeKind.TOOL]


def earlier_turns(run: Run, tools: Mapping[str, ToolDefinition | None], rules: CompiledRules) -> CallsSeen:
    """What the conversation's earlier turns of ``run``'s principal ran, read only when one of
    the tenant's rules looks back over a conversation."""
    if CONVERSATION not in scopes_looked_back(rules):
        return NOTHING_SEEN
    return calls_seen(conversation_calls(run), tools.get)


def agent_tools(agent: AgentDefinition, tenant_id, *, registry: Registry) -> dict[str, ToolDefinition | None]:
    """The tools ``agent`` may call in ``tenant_id``'s runs, by id: its packs' tools, and the MCP
    tools it names or whose servers it names, among the servers that tenant may use. A tool it
    names that is not to be found is there as None (referenced, not loaded)."""
    tools: dict[str, ToolDefinition | None] = {}
    elsewhere = []
    for ref in agent.tools:
        tools[ref.id] = registry.tool(ref.id, ref.version)
        if tools[ref.id] is None:
            elsewhere.append(ref.id)
    if elsewhere or agent.mcp_servers:
        tools |= mcp_tools_for(tenant_id, tool_ids=elsewhere, servers=agent.mcp_servers)
    return tools


def callable_now(tools: dict[str, ToolDefinition | None]) -> tuple[dict, dict[str, str]]:
    """``tools`` with those that may not be called now (held MCP tools) as None, and why each."""
    held = {tool_id: tool.held for tool_id, tool in tools.items() if getattr(tool, "held", "")}
    return {tool_id: None if tool_id in held else tool for tool_id, tool in tools.items()}, held


def is_retrieval_call(call_id: str, tool_id: str, ctx: PolicyContext) -> bool:
    prefix = RETRIEVAL_CALL.format("")
    return call_id.startswith(prefix) and call_id[len(prefix) :].isdigit() and tool_id in ctx.retrieval


def retrieval_tools(agent: AgentDefinition, *, registry: Registry) -> dict[str, ToolDefinition]:
    """The agent's retrieval sources, by id (the registry has checked each is loaded)."""
    return {ref.id: registry.tool(ref.id, ref.version) for ref in agent.retrieval}


def flow_mcp_tools(flow: FlowDefinition, tenant_id, *, registry: Registry) -> dict[str, ToolDefinition]:
    elsewhere = [
        node.target
        for node in flow.nodes
        if node.kind == NodeKind.TOOL and registry.tool(node.target) is None
    ]
    return mcp_tools_for(tenant_id, tool_ids=elsewhere) if elsewhere else {}


class JudgedEdit(NamedTuple):
    verdict: Verdict
    # The run's policy context the judgement built, without connections: the execution the
    # decision resumes in this process takes it on (``with_connections``), not building it again.
    context: PolicyContext


def judge_edited_call(run: Run, *, call_id: str, tool_id: str, node_id: str, arguments: Any) -> JudgedEdit:
    """The verdict of the call policy on ``arguments`` for ``run``'s waiting call ``call_id``, as
    if the model (or the flow) had asked for them: refused, waiting for a person (with the gate
    that asks, so the decider's rights can be checked), or ready to run. Judged with the run's
    whole facts, as its execution has them; its connections are not read (judging needs none)."""
    registry = get_registry()
    target = target_of(run, registry)
    if target is None:
        raise RunStateError(
            f"run {run.pk}: its {'agent' if run.is_agent_turn else 'flow'} is no longer in the packs"
        )
    state = RunState.fold(run_journal(run))
    context = ctx = policy_context(run, target, registry=registry, connected=False)
    if node_id:
        ctx = step_context(ctx, target.node(node_id), registry)
    elif is_retrieval_call(call_id, tool_id, ctx):
        ctx = replace(ctx, tools=ctx.retrieval)  # judged as the turn judges its retrieval sources
    ctx = replace(ctx, approved_tools=set(ctx.approved_tools) | state.approved_tools(leaving_out={call_id}))
    call = ProposedCall(call_id=call_id, tool_id=tool_id, arguments=arguments, node_id=node_id)
    return JudgedEdit(prepare(call, state, ctx, steps=EDIT_STEPS), context)
