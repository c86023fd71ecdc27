"""Each endpoint the client calls, once: what to send and how to read the answer.

``kindgi.Client`` and ``kindgi.AsyncClient`` are these same operations, sent blocking or
awaited (``kindgi.client.transport``), so the two cannot say different things.

Bodies are sent in the API's camelCase; a keyword left ``None`` is not sent, so the server's
default holds and its answer names a field that is missing. Where a body is a JSON object a
person wrote (``kindgi schedules create --spec=…``), it may be given whole, as ``spec``, in the
API's own field names: the server refuses a field it does not know, naming it.
"""

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import quote

from pydantic.alias_generators import to_camel

from kindgi.client import models
from kindgi.client.errors import InvalidIdError


@dataclass(frozen=True, kw_only=True)
class Operation[T]:
    """One request, and what its answer becomes.

    ``keyed``: the endpoint creates or decides and honours ``Idempotency-Key``; the client sends
    one (``key``, or a fresh one) and sends the same again when it retries."""

    method: str
    path: str
    read: Callable[[Any], T]
    params: Mapping[str, Any] = field(default_factory=dict)
    body: Any = None
    keyed: bool = False
    key: str | None = None


# An id of the API's: a UUID, a number, or a catalog id (my-pack.check-order).
AN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*\Z")


def segment(value: object) -> str:
    """``value`` as one segment of a path, or ``InvalidIdError``: an id that held ``/`` or was
    ``..`` would lead to another endpoint than the one meant."""
    text = str(value)
    if not AN_ID.match(text):
        raise InvalidIdError(f"{text!r} is not an id: letters, digits and . _ : - only")
    return quote(text, safe="")


def _as[T](model: type[T]) -> Callable[[Any], T]:
    return model.model_validate  # type: ignore[attr-defined]


def _nothing(_answer: Any) -> None:
    return None


def _page(model: type[models.ApiModel]) -> Callable[[Any], models.Page]:
    return models.Page[model].model_validate  # type: ignore[valid-type]


def _wire(value: Any) -> Any:
    if isinstance(value, models.ApiModel):
        return value.to_wire()
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def body_of(spec: Mapping[str, Any] | None, **fields: Any) -> dict[str, Any]:
    """``spec`` (wire names) with each field given (snake_case) that is not None over it."""
    body = dict(spec or {})
    body.update({to_camel(name): _wire(value) for name, value in fields.items() if value is not None})
    return body


def _listing(path: str, model: type[models.ApiModel], params: Mapping[str, Any]) -> Operation:
    return Operation(method="GET", path=path, read=_page(model), params=params)


# Runs


def start_run(
    *,
    flow_id: str | None = None,
    agent_id: str | None = None,
    input: Mapping[str, Any] | None = None,
    version: str | None = None,
    dry_run: bool = False,
    read_only: bool = False,
    conversation_id: str | None = None,
    connections: Mapping[str, str] | None = None,
    idempotency_key: str | None = None,
) -> Operation[models.RunDetail]:
    """Start a run of ``flow_id``, or one turn of ``agent_id`` (``input={"userMessage": …}``).

    It may finish, fail or wait (``suspended``) before this returns (the server's embedded
    profile executes it at once), or be ``queued`` for a worker; ``wait`` follows it."""
    body = body_of(
        None,
        flow_id=flow_id,
        agent_id=agent_id,
        version=version,
        conversation_id=conversation_id,
        connections=dict(connections) if connections is not None else None,
    )
    body |= {"input": dict(input or {}), "dryRun": dry_run, "readOnly": read_only}
    return Operation(
        method="POST", path="/runs", read=_as(models.RunDetail), body=body, keyed=True, key=idempotency_key
    )


def get_run(run_id: str) -> Operation[models.RunDetail]:
    return Operation(method="GET", path=f"/runs/{segment(run_id)}", read=_as(models.RunDetail))


def list_runs(
    *,
    status: str | None = None,
    flow_id: str | None = None,
    agent_id: str | None = None,
    cursor: str | None = None,
    limit: int | None = None,
) -> Operation[models.Page[models.Run]]:
    """One page of your tenant's runs, newest first."""
    params = {"status": status, "flowId": flow_id, "agentId": agent_id, "cursor": cursor, "limit": limit}
    return _listing("/runs", models.Run, params)


def journal_page(run_id: str, *, after: int = 0) -> Operation[models.JournalPage]:
    """The run's journal entries after sequence ``after``, up to 500 of them."""
    return Operation(
        method="GET",
        path=f"/runs/{segment(run_id)}/journal",
        read=_as(models.JournalPage),
        params={"after": after},
    )


def cancel_run(run_id: str) -> Operation[models.RunDetail]:
    """Cancel the run and the runs below it (its principal, a tenant admin, or a reviewer who
    may decide a call it waits on)."""
    return Operation(
        method="POST", path=f"/runs/{segment(run_id)}/cancel", read=_as(models.RunDetail), body={}
    )


# Approvals


def list_approvals(
    *,
    status: str | None = None,
    run_id: str | None = None,
    cursor: str | None = None,
    limit: int | None = None,
) -> Operation[models.Page[models.Approval]]:
    """One page of your tenant's approvals, newest first; ``run_id``: that run's (and its steps')."""
    params = {"status": status, "runId": run_id, "cursor": cursor, "limit": limit}
    return _listing("/approvals", models.Approval, params)


def get_approval(approval_id: str) -> Operation[models.Approval]:
    return Operation(method="GET", path=f"/approvals/{segment(approval_id)}", read=_as(models.Approval))


def complete_approval(
    approval_id: str,
    *,
    decision: str,
    rationale: str = "",
    arguments: Mapping[str, Any] | None = None,
    allow: models.Allow | Mapping[str, Any] | None = None,
    idempotency_key: str | None = None,
) -> Operation[models.Completion]:
    """Decide: ``approve`` (with ``arguments`` to approve others instead; with ``allow`` to let
    calls like it run for a while), ``reject`` or ``request_changes`` (``rationale`` required:
    why, or what the model should change). The run goes on before this returns."""
    body = {"decision": decision, "rationale": rationale} | body_of(
        None, arguments=dict(arguments) if arguments is not None else None, allow=_allowance(allow)
    )
    return Operation(
        method="POST",
        path=f"/approvals/{segment(approval_id)}/complete",
        read=_as(models.Completion),
        body=body,
        keyed=True,
        key=idempotency_key,
    )


def _allowance(allow: models.Allow | Mapping[str, Any] | None) -> dict[str, Any] | None:
    if allow is None or isinstance(allow, models.Allow):
        return allow.to_wire() if allow is not None else None
    return dict(allow)


def complete_approvals(
    approval_ids: list[str],
    *,
    decision: str,
    rationale: str = "",
    arguments: Mapping[str, Any] | None = None,
    idempotency_key: str | None = None,
) -> Operation[models.DecisionResults]:
    """Decide several approvals alike: each is decided on its own and answered on its own
    (``results``: ``decided`` with its completion, or ``refused`` with the error)."""
    item: dict[str, Any] = {"decision": decision, "rationale": rationale}
    if arguments is not None:
        item["arguments"] = dict(arguments)
    body = {"decisions": [{"approvalId": str(approval_id), **item} for approval_id in approval_ids]}
    return Operation(
        method="POST",
        path="/approvals/decisions",
        read=_as(models.DecisionResults),
        body=body,
        keyed=True,
        key=idempotency_key,
    )


# Reviewers


def register_reviewer(
    spec: Mapping[str, Any] | None = None,
    /,
    *,
    role: str | None = None,
    display_name: str | None = None,
) -> Operation[models.RegisteredReviewer]:
    """Register the token's user as a reviewer (a tenant admin sets roles above ``standard``)."""
    return Operation(
        method="POST",
        path="/reviewers/register",
        read=_as(models.RegisteredReviewer),
        body=body_of(spec, role=role, display_name=display_name),
    )


def reviewer_me() -> Operation[models.Reviewer]:
    return Operation(method="GET", path="/reviewers/me", read=_as(models.Reviewer))


def update_reviewer_me(
    *, notify: str | None = None, digest_minutes: int | None = None
) -> Operation[models.Reviewer]:
    """How you hear of approvals: ``immediately``, ``digest`` (every ``digest_minutes``) or ``none``."""
    body = body_of(None, notify=notify, digest_minutes=digest_minutes)
    return Operation(method="PATCH", path="/reviewers/me", read=_as(models.Reviewer), body=body)


def list_reviewers(
    *, cursor: str | None = None, limit: int | None = None
) -> Operation[models.Page[models.Reviewer]]:
    return _listing("/reviewers", models.Reviewer, {"cursor": cursor, "limit": limit})


# Approval rules (a tenant admin's)


def list_rules(
    *, cursor: str | None = None, limit: int | None = None
) -> Operation[models.Page[models.ApprovalRule]]:
    return _listing("/approval-rules", models.ApprovalRule, {"cursor": cursor, "limit": limit})


def get_rule(rule_id: int) -> Operation[models.ApprovalRule]:
    return Operation(method="GET", path=f"/approval-rules/{segment(rule_id)}", read=_as(models.ApprovalRule))


def create_rule(
    spec: Mapping[str, Any] | None = None,
    /,
    *,
    name: str | None = None,
    gate: str | None = None,
    tool_pattern: str | None = None,
    agent_pattern: str | None = None,
    effect_kind: str | None = None,
    resource_pattern: str | None = None,
    condition: str | None = None,
    required_role: str | None = None,
    reviewers: list[str] | None = None,
    ttl_seconds: int | None = None,
    reason: str | None = None,
    required_approvals: int | None = None,
    step_up: bool | None = None,
    escalation: list[Mapping[str, Any]] | None = None,
    after: Mapping[str, Any] | None = None,
    budget: Mapping[str, Any] | None = None,
    enabled: bool | None = None,
    idempotency_key: str | None = None,
) -> Operation[models.ApprovalRule]:
    """A tenant rule (``name`` and ``gate`` required: ``deny``, ``always_ask``, ``ask_once``,
    ``never_ask``) for the calls it matches; DESIGN §2 and docs/policy-memory.md say how."""
    body = body_of(
        spec,
        name=name,
        gate=gate,
        tool_pattern=tool_pattern,
        agent_pattern=agent_pattern,
        effect_kind=effect_kind,
        resource_pattern=resource_pattern,
        condition=condition,
        required_role=required_role,
        reviewers=reviewers,
        ttl_seconds=ttl_seconds,
        reason=reason,
        required_approvals=required_approvals,
        step_up=step_up,
        escalation=escalation,
        after=after,
        budget=budget,
        enabled=enabled,
    )
    return Operation(
        method="POST",
        path="/approval-rules",
        read=_as(models.ApprovalRule),
        body=body,
        keyed=True,
        key=idempotency_key,
    )


def update_rule(rule_id: int, changes: Mapping[str, Any], /) -> Operation[models.ApprovalRule]:
    """Change the fields ``changes`` names (the API's field names: ``{"requiredRole": "senior"}``)."""
    return Operation(
        method="PATCH",
        path=f"/approval-rules/{segment(rule_id)}",
        read=_as(models.ApprovalRule),
        body=dict(changes),
    )


def delete_rule(rule_id: int) -> Operation[None]:
    return Operation(method="DELETE", path=f"/approval-rules/{segment(rule_id)}", read=_nothing)


# Schedules


def list_schedules(
    *, cursor: str | None = None, limit: int | None = None
) -> Operation[models.Page[models.Schedule]]:
    """Your schedules (a tenant admin: the tenant's)."""
    return _listing("/schedules", models.Schedule, {"cursor": cursor, "limit": limit})


def get_schedule(schedule_id: str) -> Operation[models.Schedule]:
    return Operation(method="GET", path=f"/schedules/{segment(schedule_id)}", read=_as(models.Schedule))


def create_schedule(
    spec: Mapping[str, Any] | None = None,
    /,
    *,
    name: str | None = None,
    cron: str | None = None,
    agent_id: str | None = None,
    flow_id: str | None = None,
    input: Mapping[str, Any] | None = None,
    owner: str | None = None,
    enabled: bool | None = None,
    idempotency_key: str | None = None,
) -> Operation[models.Schedule]:
    """Runs of ``agent_id`` or ``flow_id`` on the ``cron`` expression's ticks (UTC), standing on
    ``owner`` (you, unless a tenant admin names another)."""
    body = body_of(
        spec,
        name=name,
        cron=cron,
        agent_id=agent_id,
        flow_id=flow_id,
        input=dict(input) if input is not None else None,
        owner=owner,
        enabled=enabled,
    )
    return Operation(
        method="POST",
        path="/schedules",
        read=_as(models.Schedule),
        body=body,
        keyed=True,
        key=idempotency_key,
    )


def update_schedule(schedule_id: str, changes: Mapping[str, Any], /) -> Operation[models.Schedule]:
    """Change the fields ``changes`` names (the API's field names: ``{"enabled": false}``)."""
    return Operation(
        method="PATCH",
        path=f"/schedules/{segment(schedule_id)}",
        read=_as(models.Schedule),
        body=dict(changes),
    )


def delete_schedule(schedule_id: str) -> Operation[None]:
    return Operation(method="DELETE", path=f"/schedules/{segment(schedule_id)}", read=_nothing)


# Standing grants


def list_grants(
    *, cursor: str | None = None, limit: int | None = None
) -> Operation[models.Page[models.Grant]]:
    """Your grants (a tenant admin: the tenant's), newest first."""
    return _listing("/grants", models.Grant, {"cursor": cursor, "limit": limit})


def create_grant(
    spec: Mapping[str, Any] | None = None,
    /,
    *,
    tool_pattern: str | None = None,
    scope: str | None = None,
    principal: str | None = None,
    agent_id: str | None = None,
    agent_pattern: str | None = None,
    condition: str | None = None,
    max_calls: int | None = None,
    sum_of: str | None = None,
    max_sum: float | None = None,
    for_seconds: int | None = None,
    expires_at: datetime | None = None,
    idempotency_key: str | None = None,
) -> Operation[models.Grant]:
    """A standing grant in your name: the calls it covers (``tool_pattern``, for one
    ``principal`` or one ``agent_id``, per ``scope``) run without asking, within its limits."""
    body = body_of(
        spec,
        tool_pattern=tool_pattern,
        scope=scope,
        principal=principal,
        agent_id=agent_id,
        agent_pattern=agent_pattern,
        condition=condition,
        max_calls=max_calls,
        sum_of=sum_of,
        max_sum=max_sum,
        for_seconds=for_seconds,
        expires_at=expires_at,
    )
    return Operation(
        method="POST",
        path="/grants",
        read=_as(models.Grant),
        body=body,
        keyed=True,
        key=idempotency_key,
    )


def revoke_grant(grant_id: int) -> Operation[models.Grant]:
    """It covers no call from the next one on."""
    return Operation(
        method="POST", path=f"/grants/{segment(grant_id)}/revoke", read=_as(models.Grant), body={}
    )


# The catalog


def _catalog(kind: str, model: type[models.ApiModel]):
    def listing(*, cursor: str | None = None, limit: int | None = None) -> Operation:
        return _listing(f"/{kind}", model, {"cursor": cursor, "limit": limit})

    def get(definition_id: str, *, version: str | None = None) -> Operation:
        return Operation(
            method="GET",
            path=f"/{kind}/{segment(definition_id)}",
            read=_as(model),
            params={"version": version},
        )

    listing.__doc__ = f"One page of the catalog's {kind} in service."
    get.__doc__ = f"One of the {kind}: its newest version, or ``version``."
    return listing, get


list_tools, get_tool = _catalog("tools", models.Tool)
list_agents, get_agent = _catalog("agents", models.Agent)
list_flows, get_flow = _catalog("flows", models.Flow)


def list_mcp_servers() -> Operation[models.McpServerList]:
    """The MCP servers whose tools are in the catalog, and whether each answers."""
    return Operation(method="GET", path="/mcp-servers", read=_as(models.McpServerList))


# Connections (your own)


def list_apps() -> Operation[models.AppList]:
    return Operation(method="GET", path="/connection-apps", read=_as(models.AppList))


def list_connections() -> Operation[models.ConnectionList]:
    return Operation(method="GET", path="/connections", read=_as(models.ConnectionList))


def get_connection(connection_id: str) -> Operation[models.Connection]:
    return Operation(method="GET", path=f"/connections/{segment(connection_id)}", read=_as(models.Connection))


def connect_app(app: str) -> Operation[models.StartedConnection]:
    """Begin connecting ``app``: open the answer's ``authorize_url`` to allow access."""
    return Operation(
        method="POST", path="/connections", read=_as(models.StartedConnection), body={"app": app}
    )


def remove_connection(connection_id: str) -> Operation[None]:
    """Disconnect: the connection's tokens are forgotten at once."""
    return Operation(method="DELETE", path=f"/connections/{segment(connection_id)}", read=_nothing)


# The audit chain (tenant admins)


def list_audit(
    *,
    action: str | None = None,
    actor: str | None = None,
    surface: str | None = None,
    target_type: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    cursor: str | None = None,
    limit: int | None = None,
) -> Operation[models.Page[models.AuditEntry]]:
    params = {
        "action": action,
        "actor": actor,
        "surface": surface,
        "targetType": target_type,
        "since": _wire(since),
        "until": _wire(until),
        "cursor": cursor,
        "limit": limit,
    }
    return _listing("/audit", models.AuditEntry, params)


def audit_heads() -> Operation[models.Heads]:
    """Where the tenant's chains (decisions, audit) end now: for an outside system to witness."""
    return Operation(method="GET", path="/audit/heads", read=_as(models.Heads))
