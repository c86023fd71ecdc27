from dataclasses import dataclass

from django.db.models import F, Q

from tools.models import Agent, AgentGateOverride, Flow, McpServer, Tool


@dataclass(frozen=True, kw_only=True)
class CatalogSummary:
    tools: int
    agents: int
    flows: int
    packs: list[str]


def catalog_summary() -> CatalogSummary:
    """Counts of the packs' definitions in service (retired ones and MCP servers' tools left out)."""
    tools = Tool.objects.filter(retired_at__isnull=True, origin=Tool.Origin.CODE)
    packs = set(tools.values_list("pack", flat=True).distinct())
    packs |= set(Agent.objects.filter(retired_at__isnull=True).values_list("pack", flat=True))
    packs |= set(Flow.objects.filter(retired_at__isnull=True).values_list("pack", flat=True))
    return CatalogSummary(
        tools=tools.count(),
        agents=Agent.objects.filter(retired_at__isnull=True).count(),
        flows=Flow.objects.filter(retired_at__isnull=True).count(),
        packs=sorted(packs),
    )


def agent_admin_overrides(agent_id: str, version: str, tenant_id=None) -> dict[str, tuple[str, str]]:
    """The admins' gate overrides for one agent version that gate ``tenant_id``'s runs: tool id →
    (gate, condition). The site's, with the tenant's own in their place."""
    rows = AgentGateOverride.objects.filter(
        Q(tenant__isnull=True) | Q(tenant_id=tenant_id), agent__key=agent_id, agent__version=version
    ).order_by(F("tenant_id").asc(nulls_first=True))
    return {
        tool_key: (gate, condition)
        for tool_key, gate, condition in rows.values_list("tool_key", "gate", "condition")
    }


def admin_overrides_of_agents(
    agent_versions, tenant_id=None
) -> dict[tuple[str, str], dict[str, tuple[str, str]]]:
    """``agent_admin_overrides`` for several agent versions at once, in one query: (agent id,
    version) → tool id → (gate, condition)."""
    keys = set(agent_versions)
    found: dict[tuple[str, str], dict[str, tuple[str, str]]] = {key: {} for key in keys}
    if not keys:
        return found
    wanted = Q()
    for key, version in keys:
        wanted |= Q(agent__key=key, agent__version=version)
    rows = AgentGateOverride.objects.filter(wanted, Q(tenant__isnull=True) | Q(tenant_id=tenant_id)).order_by(
        F("tenant_id").asc(nulls_first=True)
    )
    for key, version, tool_key, gate, condition in rows.values_list(
        "agent__key", "agent__version", "tool_key", "gate", "condition"
    ):
        found[(key, version)][tool_key] = (gate, condition)
    return found


def mcp_server_health() -> dict | None:
    """For anyone who asks (``/readyz``): how many enabled MCP servers answered when last asked,
    and the names of the site's own that did not (a tenant's server is its business). None when
    there are none."""
    rows = list(
        McpServer.objects.filter(enabled=True).values_list("name", "tenant_id", "listed_at", "last_error")
    )
    if not rows:
        return None
    silent = [(name, tenant_id) for name, tenant_id, listed_at, error in rows if listed_at is None or error]
    return {
        "answering": len(rows) - len(silent),
        "notAnswering": len(silent),
        "siteServersNotAnswering": sorted(name for name, tenant_id in silent if tenant_id is None),
    }
