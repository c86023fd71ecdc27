from dataclasses import dataclass

from tools.models import Agent, AgentGateOverride, Flow, Tool


@dataclass(frozen=True, kw_only=True)
class CatalogSummary:
    tools: int
    agents: int
    flows: int
    packs: list[str]


def catalog_summary() -> CatalogSummary:
    """Counts of the definitions in service (retired ones left out)."""
    tools = Tool.objects.filter(retired_at__isnull=True)
    packs = set(tools.values_list("pack", flat=True).distinct())
    packs |= set(Agent.objects.filter(retired_at__isnull=True).values_list("pack", flat=True))
    packs |= set(Flow.objects.filter(retired_at__isnull=True).values_list("pack", flat=True))
    return CatalogSummary(
        tools=tools.count(),
        agents=Agent.objects.filter(retired_at__isnull=True).count(),
        flows=Flow.objects.filter(retired_at__isnull=True).count(),
        packs=sorted(packs),
    )


def agent_admin_overrides(agent_id: str, version: str) -> dict[str, tuple[str, str]]:
    """The gate overrides an admin set for one agent version: tool id → (gate, condition)."""
    rows = AgentGateOverride.objects.filter(agent__key=agent_id, agent__version=version)
    return {
        tool_key: (gate, condition)
        for tool_key, gate, condition in rows.values_list("tool_key", "gate", "condition")
    }
