"""Packs → catalog rows: create what is new, update what changed, retire what left the code."""

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import connections, transaction
from django.utils import timezone

from kindgi import AgentDefinition, FlowDefinition, Registry, ToolDefinition
from kindgi.naming import pack_of, semver_key
from tenants.config import bump_config_version
from tools.models import Agent, AgentGateOverride, Definition, Flow, Tool
from tools.registry import get_registry


@dataclass
class LoadReport:
    """What a load did, counted per kind (``tool``, ``agent``, ``flow``)."""

    created: Counter = field(default_factory=Counter)
    updated: Counter = field(default_factory=Counter)
    unchanged: Counter = field(default_factory=Counter)
    retired: Counter = field(default_factory=Counter)
    revived: Counter = field(default_factory=Counter)
    carried_overrides: int = 0

    @property
    def changed(self) -> bool:
        """Whether the load changed the catalog at all."""
        counts = (self.created, self.updated, self.retired, self.revived)
        return any(sum(counter.values()) for counter in counts) or bool(self.carried_overrides)

    def __str__(self) -> str:
        parts = []
        for kind in ("tool", "agent", "flow"):
            counts = [
                f"{getattr(self, name)[kind]} {name}"
                for name in ("created", "updated", "unchanged", "retired", "revived")
                if getattr(self, name)[kind]
            ]
            parts.append(f"{kind}s: {', '.join(counts) or 'none'}")
        text = "; ".join(parts)
        if self.carried_overrides:
            text += f"; {self.carried_overrides} admin gate override(s) carried to new agent versions"
        return text


def tool_fields(tool: ToolDefinition) -> dict[str, Any]:
    return {
        "pack": pack_of(tool.id),
        "description": tool.description,
        "summary": tool.summary,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "mutating": tool.mutating,
        "effects": [effect.to_dict() for effect in tool.effects],
        "is_read_only": tool.is_read_only,
        "result_is_outside_data": tool.result_is_outside_data,
        "idempotent": tool.idempotent,
        "may_wait": tool.may_wait,
        "execution": tool.execution.value,
        "origin": tool.origin.value,
        "connection": tool.connection or "",
    }


def agent_fields(agent: AgentDefinition) -> dict[str, Any]:
    return {
        "pack": pack_of(agent.id),
        "description": agent.description,
        "name": agent.name,
        "instructions": agent.instructions,
        "model": agent.model_name,
        "tool_refs": [ref.to_dict() for ref in agent.tools],
        "guardrails": agent.guardrail_names,
        "parameters": [parameter.to_dict() for parameter in agent.parameters],
        "capabilities": [dict(capability) for capability in agent.capabilities],
        "retrieval": [ref.to_dict() for ref in agent.retrieval],
        "parallel_tool_calls": agent.parallel_tool_calls,
        "gates_enabled": agent.gates_enabled,
        "code_overrides": {k: v.value for k, v in (agent.gate_overrides or {}).items()},
        "code_override_conditions": agent.override_condition_names,
        "input_schema": agent.input_schema,
        "mcp_servers": list(agent.mcp_servers),
    }


def flow_fields(flow: FlowDefinition) -> dict[str, Any]:
    return {
        "pack": pack_of(flow.id),
        "description": flow.description,
        "input_schema": flow.input_schema,
        "nodes": [node.to_dict() for node in flow.nodes],
        "output": flow.output,
    }


@transaction.atomic
def do_load_catalog(registry: Registry | None = None, *, now: datetime | None = None) -> LoadReport:
    """Make the catalog match ``registry`` (by default the configured packs). Safe to repeat."""
    registry = registry or get_registry()
    now = now or timezone.now()
    report = LoadReport()
    _sync("tool", Tool, registry.tools, tool_fields, report, now)
    new_agents = _sync("agent", Agent, registry.agents, agent_fields, report, now)
    _sync("flow", Flow, registry.flows, flow_fields, report, now)
    for agent in new_agents:
        report.carried_overrides += _carry_admin_overrides(agent)
    return report


def _sync(kind, model, definitions, to_fields, report: LoadReport, now) -> list[Definition]:
    existing = {(row.key, row.version): row for row in model.objects.select_for_update()}
    created = []
    for (key, version), definition in definitions.items():
        fields = to_fields(definition)
        row = existing.get((key, version))
        if row is None:
            created.append(model.objects.create(key=key, version=version, **fields))
            report.created[kind] += 1
            continue
        changed = [name for name, value in fields.items() if getattr(row, name) != value]
        for name in changed:
            setattr(row, name, fields[name])
        if row.retired_at is not None:
            row.retired_at = None
            changed.append("retired_at")
            report.revived[kind] += 1
        elif changed:
            report.updated[kind] += 1
        else:
            report.unchanged[kind] += 1
        if changed:
            row.save(update_fields=[*changed, "updated_at"])
    for (key, version), row in existing.items():
        if (key, version) not in definitions and row.retired_at is None:
            row.retired_at = now
            row.save(update_fields=["retired_at", "updated_at"])
            report.retired[kind] += 1
    return created


def _carry_admin_overrides(agent: Agent) -> int:
    """Give a new agent version the admin's overrides of the newest earlier version.

    An admin who made a tool always ask must not lose that gate because a
    developer released a new version of the agent.
    """
    earlier = [
        row
        for row in Agent.objects.filter(key=agent.key)
        .exclude(pk=agent.pk)
        .prefetch_related("admin_overrides")
        if semver_key(row.version) < semver_key(agent.version)
    ]
    if not earlier:
        return 0
    previous = max(earlier, key=lambda row: semver_key(row.version))
    carried = [
        AgentGateOverride(
            agent=agent,
            tenant_id=override.tenant_id,
            tool_key=override.tool_key,
            gate=override.gate,
            condition=override.condition,
            changed_by=override.changed_by,
        )
        for override in previous.admin_overrides.all()
        if override.tool_key in agent.tool_keys
    ]
    AgentGateOverride.objects.bulk_create(carried)  # sends no post_save: the versions move here
    for tenant_id in {override.tenant_id for override in carried}:
        bump_config_version(tenant_id)
    return len(carried)


def load_catalog_after_migrate(*, using: str, verbosity: int = 1, **kwargs) -> None:
    """``post_migrate`` hook: the catalog follows the code after every ``migrate``."""
    if Tool._meta.db_table not in connections[using].introspection.table_names():
        return  # migrated backwards past the catalog's tables
    report = do_load_catalog()
    if verbosity >= 1:
        print(f"  Loaded the packs into the catalog: {report}")
