"""What Kindgi offers an MCP client: each flow and agent, as a tool, and a call of one as a run.

A call starts a run through ``check_start_run``, the one way a run starts, for the caller's
tenant and as the caller (whose API token the endpoint checked). It answers with the run's
output when the run ends within the call's time; a run that waits for a person's approval
answers with that approval and the run's id, and goes on once it is decided.
"""

from dataclasses import dataclass
from typing import Any

from approvals.selectors import pending_approvals_of_run
from core.errors import DomainError
from kindgi import AgentDefinition, FlowDefinition, Registry
from kindgi.flows import NodeKind
from kindgi.naming import semver_key
from runs.actions import check_start_run
from runs.models import Run, RunStatus
from tools.registry import get_registry


@dataclass(frozen=True, kw_only=True)
class Offered:
    """One flow or agent as an MCP tool."""

    name: str
    kind: str  # "flow" or "agent"
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool


@dataclass(frozen=True, kw_only=True)
class CallAnswer:
    data: dict[str, Any]
    is_error: bool = False


def offered(registry: Registry | None = None) -> list[Offered]:
    """The newest version of each flow and agent, with what it can touch."""
    registry = registry or get_registry()
    found = []
    for kind, definitions in (("flow", registry.flows), ("agent", registry.agents)):
        for definition_id in sorted({key for key, _ in definitions}):
            definition = definitions[(definition_id, _newest(definitions, definition_id))]
            found.append(_offer(kind, definition, registry))
    return found


def _newest(definitions, definition_id: str) -> str:
    return max((version for key, version in definitions if key == definition_id), key=semver_key)


def _offer(kind: str, definition: FlowDefinition | AgentDefinition, registry: Registry) -> Offered:
    if isinstance(definition, AgentDefinition):
        title = definition.name
        description = definition.description or f"A turn of the agent {definition.name}: send userMessage."
    else:
        title = definition.id
        description = definition.description or f"A run of the flow {definition.id}."
    return Offered(
        name=definition.id,
        kind=kind,
        title=title,
        description=description,
        input_schema=definition.input_schema,
        read_only=only_reads(definition, registry),
    )


def only_reads(definition: FlowDefinition | AgentDefinition, registry: Registry) -> bool:
    """Whether every tool ``definition`` can reach is read-only: an MCP server's never is, nor a
    tool that is not loaded."""
    if isinstance(definition, AgentDefinition):
        if definition.mcp_servers:
            return False
        tools = [registry.tool(ref.id, ref.version) for ref in definition.tools]
        return all(tool is not None and tool.is_read_only for tool in tools)
    for node in definition.nodes:
        if node.kind == NodeKind.TOOL:
            tool = registry.tool(node.target, node.version)
            if tool is None or not tool.is_read_only:
                return False
        else:
            agent = registry.agent(node.target, node.version)
            if agent is None or not only_reads(agent, registry):
                return False
    return True


def start(*, name: str, arguments: dict[str, Any], user, tenant, token=None) -> Run | CallAnswer:
    """Start a run of the flow or agent ``name`` as ``user`` (with ``token``, the API token it
    called with): the run (with the immediate task backend, already ended or waiting), or the
    error answer. Synchronous (touches the database)."""
    registry = get_registry()
    kind = (
        "flow" if registry.flow(name) is not None else "agent" if registry.agent(name) is not None else None
    )
    if kind is None:
        return CallAnswer(data={"error": f"no flow or agent named {name!r}"}, is_error=True)
    try:
        return check_start_run(
            flow_id=name if kind == "flow" else None,
            agent_id=name if kind == "agent" else None,
            input=arguments,
            tenant=tenant,
            acting_user=user,
            token=token,
        )
    except DomainError as error:
        return CallAnswer(
            data={"error": "; ".join(error.errors) if error.errors else str(error)}, is_error=True
        )


def still_going(run: Run) -> bool:
    """Whether a call should wait longer for ``run`` (re-read first): queued or running."""
    run.refresh_from_db()
    return run.status in (RunStatus.QUEUED, RunStatus.RUNNING)


def answer_for(run: Run) -> CallAnswer:
    data: dict[str, Any] = {"runId": str(run.pk), "status": run.status}
    if run.status == RunStatus.COMPLETED:
        data["output"] = run.output
        return CallAnswer(data=data)
    if run.status in (RunStatus.FAILED, RunStatus.CANCELLED):
        data["failureMessage"] = run.failure_message
        return CallAnswer(data=data, is_error=True)
    waiting = pending_approvals_of_run(run)
    data["waitingFor"] = [
        {
            "approvalId": str(approval.pk),
            "title": approval.title,
            "toolId": approval.tool_key,
            "requiredRole": approval.required_role,
        }
        for approval in waiting
    ]
    if data["waitingFor"]:
        first = data["waitingFor"][0]["approvalId"]
        data["message"] = (
            f"The run waits for a person's approval ({first}). A reviewer decides it in the console, "
            f"the API or `kindgi approvals complete {first} --decision approve|reject`; the run then "
            f"goes on by itself, and `kindgi runs get {run.pk}` shows its output."
        )
    else:
        data["message"] = f"The run is still {run.status}; `kindgi runs get {run.pk}` shows how it ends."
    return CallAnswer(data=data)
