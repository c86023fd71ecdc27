"""The gates' view of a tenant's configuration, compiled once per process (``tenants.config``):
its approval rules, its standing grants, and the admins' overrides of each agent version."""

from runs.engine.gates import CompiledRules
from runs.grants import grants_for_tenant
from runs.rules import rules_for_tenant
from tenants.config import cached
from tools.selectors import agent_admin_overrides


def tenant_rules(tenant_id, version: int | None) -> CompiledRules:
    """The tenant's enabled approval rules, indexed for the gates."""
    return cached(("rules", tenant_id), version, lambda: CompiledRules(rules_for_tenant(tenant_id)))


def tenant_grants(tenant_id, version: int | None) -> tuple:
    """The tenant's standing grants that may still cover a call (a use checks them again)."""
    return cached(("grants", tenant_id), version, lambda: tuple(grants_for_tenant(tenant_id)))


def admin_overrides(agent_id: str, agent_version: str, tenant_id, version: int | None) -> dict:
    """The admins' overrides of one agent version for the tenant's runs (the site's, with the
    tenant's own in their place)."""
    key = ("overrides", tenant_id, agent_id, agent_version)
    return cached(key, version, lambda: agent_admin_overrides(agent_id, agent_version, tenant_id))
