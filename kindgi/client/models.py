"""The API's shapes as the client returns them: one model for each of ``/api/schema/``'s
components the client reads, named as the component is (``tests/client/test_schema_drift.py``
holds the two together, field by field).

Fields are snake_case in Python and camelCase on the wire (``run.failure_message`` is
``failureMessage``). A field a newer server adds is kept (``model_extra``) rather than refused,
so an older client goes on working; ``to_wire`` gives back what the server sent.
"""

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

RunStatus = Literal["queued", "running", "suspended", "completed", "failed", "cancelled"]
ApprovalStatus = Literal["pending", "approved", "rejected", "changes_requested", "expired", "cancelled"]
DecisionKind = Literal["approve", "reject", "request_changes"]
Trigger = Literal["person", "service", "mail", "schedule"]
RuleGate = Literal["always_ask", "ask_once", "never_ask", "deny"]
ReviewerRole = Literal["standard", "senior", "admin"]
Notify = Literal["immediately", "digest", "none"]
EffectKind = Literal[
    "reads",
    "writes",
    "deletes",
    "network",
    "spawns-run",
    "emits-event",
    "external-side-effect",
    "sensitive-data-egress",
]
JournalKind = Literal[
    "run.started",
    "node.started",
    "node.completed",
    "model.called",
    "tool.called",
    "tool.completed",
    "tool.failed",
    "tool.refused",
    "guardrail.judged",
    "wait.suspended",
    "wait.resumed",
    "approval.escalated",
    "run.completed",
    "run.failed",
    "run.cancelled",
]
Surface = Literal["api", "cli", "console", "admin", "command", "system"]

# A run in one of these goes no further.
FINISHED: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


class ApiModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, validate_by_name=True, validate_by_alias=True, extra="allow", frozen=True
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON the server sent (the fields it sent, by their wire names)."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class Page[Item: ApiModel](ApiModel):
    """One page of a list; pass ``next_cursor`` as ``cursor`` for the next (None: the last)."""

    items: list[Item]
    next_cursor: str | None


# Runs


class ToolCall(ApiModel):
    id: str
    tool_id: str
    arguments: dict[str, Any]


class Message(ApiModel):
    role: Literal["user", "assistant", "tool"]
    content: Any
    tool_calls: list[ToolCall] | None = None
    call_id: str | None = None
    tool_id: str | None = None
    outside_data: bool | None = None
    source: Literal["mail", "retrieval"] | None = None


class Run(ApiModel):
    id: str
    flow_id: str
    flow_version: str
    agent_id: str | None
    agent_version: str | None
    status: RunStatus
    dry_run: bool
    read_only: bool
    input: dict[str, Any]
    output: Any
    failure_message: str
    parent_run_id: str | None
    conversation_id: str | None
    trigger: Trigger
    started_by: str | None = None
    principal: str | None = None
    service: str | None = None
    connections: dict[str, Any]
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class RunDetail(Run):
    """A run with its conversation (``messages``, for an agent's turn)."""

    messages: list[Message]


class JournalEntry(ApiModel):
    sequence: int
    kind: JournalKind
    node_id: str
    time: datetime
    duration_ms: int | None
    payload: dict[str, Any]


class JournalPage(ApiModel):
    items: list[JournalEntry]
    next_cursor: str | None


class JournalEvent(ApiModel):
    """One journal entry as ``watch`` streams it: of the watched run or of one of its steps'
    runs (``run_id``), with that run's status once the entry was written."""

    run_id: str
    run_status: RunStatus
    entry: JournalEntry
    replayed: bool = False


class Schedule(ApiModel):
    id: str
    name: str
    agent_id: str
    flow_id: str
    input: dict[str, Any]
    cron: str
    owner: str
    enabled: bool
    next_run_at: datetime | None
    last_run_at: datetime | None
    last_run_id: str | None
    last_error: str
    created_at: datetime


# Approvals


class ConnectionRef(ApiModel):
    app: str
    owner: str
    label: str | None = None


class SubjectRef(ApiModel):
    run_id: str
    tool_id: str
    tool_version: str
    agent_id: str | None
    flow_id: str | None
    node_id: str | None
    call_id: str
    arguments: dict[str, Any]
    connection: ConnectionRef | None = None


class ProvenanceRef(ApiModel):
    run_id: str


class Decision(ApiModel):
    decision: DecisionKind
    rationale: str
    reviewer_role_at_decision: str
    reviewer: str
    decided_at: datetime
    arguments: dict[str, Any] | None


class GivenApproval(ApiModel):
    reviewer: str
    reviewer_role_at_decision: str
    decided_at: datetime
    superseded: bool
    superseded_at: datetime | None
    superseded_reason: str | None


class Approval(ApiModel):
    id: str
    subject_kind: str
    subject_ref: SubjectRef
    required_role: str
    status: ApprovalStatus
    title: str
    summary: str
    why: str
    step_up: bool
    provenance_ref: ProvenanceRef
    created_at: datetime
    decided_at: datetime | None
    expires_at: datetime | None
    decision: Decision | None
    required_approvals: int
    approvals_given: list[GivenApproval]
    approvals_missing: int
    reason: str


class Completion(ApiModel):
    """What deciding answers: ``terminal`` once the approval is decided (and the run went on),
    ``partial`` when it needs more approvals than this one."""

    kind: Literal["terminal", "partial"]
    approval: Approval
    decision: Decision
    waitpoint_resolved: bool


class ItemError(ApiModel):
    code: str
    message: str
    details: dict[str, Any]


class DecisionResult(ApiModel):
    approval_id: str
    status: Literal["decided", "refused"]
    http_status: int
    completion: Completion | None = None
    error: ItemError | None = None


class DecisionResults(ApiModel):
    results: list[DecisionResult]


class Reviewer(ApiModel):
    user: str
    role: str
    display_name: str
    tenant: str
    notify: Notify
    digest_minutes: int
    created_at: datetime
    updated_at: datetime


class RegisteredReviewer(Reviewer):
    """A registration's answer: the reviewer, and a note of what changed."""

    note: str


class ApprovalRule(ApiModel):
    id: int
    name: str
    tool_pattern: str | None = None
    agent_pattern: str | None = None
    effect_kind: EffectKind | Literal[""] | None = None
    resource_pattern: str | None = None
    condition: str | None = None
    gate: RuleGate
    required_role: ReviewerRole | Literal[""] | None = None
    reviewers: list[str] | None = None
    ttl_seconds: int | None = None
    reason: str | None = None
    required_approvals: int | None = None
    step_up: bool | None = None
    escalation: list[dict[str, Any]] | None = None
    after: dict[str, Any] | None = None
    budget: dict[str, Any] | None = None
    enabled: bool | None = None
    created_at: datetime


class Grant(ApiModel):
    id: int
    granter: str
    tool_pattern: str
    agent_pattern: str
    condition: str
    scope: Literal["principal", "agent"]
    principal: str | None = None
    agent_id: str
    max_calls: int | None
    sum_of: str
    max_sum: float | None
    expires_at: datetime
    approval_id: str | None
    uses: int
    used_sum: float
    status: str
    revoked_at: datetime | None
    created_at: datetime


# The catalog


class Effect(ApiModel):
    kind: str
    resource: str


class Tool(ApiModel):
    id: str
    version: str
    pack: str
    description: str
    summary: str | None
    mutating: bool
    read_only: bool
    effects: list[Effect]
    result_is_outside_data: bool
    idempotent: bool
    may_wait: bool
    execution: Literal["parallel", "sequential"]
    origin: Literal["code", "mcp"]
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    retired: bool
    mcp_server: str | None = None
    claims: dict[str, Any]
    connection: str | None


class ToolRef(ApiModel):
    id: str
    version: str


class Overrides(ApiModel):
    code: dict[str, Any]
    admin: dict[str, Any]
    effective: dict[str, Any]


class Agent(ApiModel):
    id: str
    version: str
    pack: str
    name: str
    description: str
    instructions: str
    model: str
    tools: list[ToolRef]
    retrieval: list[ToolRef]
    parameters: list[dict[str, Any]]
    capabilities: list[dict[str, Any]]
    parallel_tool_calls: bool
    gates_enabled: bool
    overrides: Overrides
    input_schema: dict[str, Any]
    retired: bool


class FlowNode(ApiModel):
    id: str
    kind: Literal["tool", "agent"]
    tool: str | None = None
    agent: str | None = None
    version: str
    input: dict[str, Any]


class Flow(ApiModel):
    id: str
    version: str
    pack: str
    description: str
    input_schema: dict[str, Any]
    nodes: list[FlowNode]
    output: dict[str, Any]
    retired: bool


class McpServer(ApiModel):
    name: str
    scope: str
    transport: Literal["stdio", "http"]
    enabled: bool
    answering: bool
    last_error: str
    listed_at: datetime | None
    checked_at: datetime | None
    tools: int


class McpServerList(ApiModel):
    items: list[McpServer]


# Connections


class Connection(ApiModel):
    id: str
    app: str
    app_name: str
    owner: str
    status: Literal["pending", "active", "revoked"]
    scopes: Any
    expires_at: datetime | None
    created_at: datetime
    connected_at: datetime | None
    refreshed_at: datetime | None
    last_used_at: datetime | None
    revoked_at: datetime | None
    failure: str


class StartedConnection(Connection):
    """A connection just begun: open ``authorize_url`` to allow access."""

    authorize_url: str


class ConnectionList(ApiModel):
    items: list[Connection]


class App(ApiModel):
    name: str
    display_name: str
    scope: str
    scopes: Any
    api_base_url: str


class AppList(ApiModel):
    items: list[App]


# The audit chain


class Target(ApiModel):
    type: str
    id: str
    label: str


class AuditEntry(ApiModel):
    sequence: int
    action: str
    actor: str
    surface: Surface
    target: Target
    before: Any
    after: Any
    created_at: datetime
    hash: str
    previous_hash: str


class Head(ApiModel):
    sequence: int
    hash: str


class Heads(ApiModel):
    decisions: Head
    audit: Head


# What the client sends, where a body has a shape of its own (DESIGN §6, standing grants).


class Allow(ApiModel):
    """With an approval: allow calls like it for a while, as a standing grant in your name."""

    model_config = ConfigDict(extra="forbid")

    for_seconds: int | None = None
    expires_at: datetime | None = None
    max_calls: int | None = None
    sum_of: str | None = None
    max_sum: float | None = None
    condition: str | None = None


__all__ = [
    "FINISHED",
    "Agent",
    "Allow",
    "ApiModel",
    "App",
    "AppList",
    "Approval",
    "ApprovalRule",
    "AuditEntry",
    "Completion",
    "Connection",
    "ConnectionList",
    "ConnectionRef",
    "Decision",
    "DecisionResult",
    "DecisionResults",
    "Effect",
    "Flow",
    "FlowNode",
    "GivenApproval",
    "Grant",
    "Head",
    "Heads",
    "ItemError",
    "JournalEntry",
    "JournalEvent",
    "JournalPage",
    "McpServer",
    "McpServerList",
    "Message",
    "Overrides",
    "Page",
    "ProvenanceRef",
    "RegisteredReviewer",
    "Reviewer",
    "Run",
    "RunDetail",
    "Schedule",
    "StartedConnection",
    "SubjectRef",
    "Target",
    "Tool",
    "ToolCall",
    "ToolRef",
]
