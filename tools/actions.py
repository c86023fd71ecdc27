"""Setting and clearing an agent's admin overrides: the one way they are written from the API.

The admin's inline validates through the same model checks (``AgentGateOverride.clean``): the
tool must be one of the agent's, the gate ``always_ask`` or ``never_ask``, the condition one
that parses.
"""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from audit.actions import SettingKind, do_delete_setting, do_save_setting
from kindgi.gates import GATE_OVERRIDE_TEXT, GateOverride
from tenants.authority import check_may_configure
from tools.exceptions import CatalogInputError
from tools.models import Agent, AgentGateOverride

_WIRE = {"tool_key": "toolId", "gate": "gate", "condition": "condition"}


OVERRIDES = "{tenant}'s gate overrides"


def check_set_override(
    *, agent: Agent, tenant, tool_id: str, gate: Any, condition: Any, acting_user, surface: str
) -> AgentGateOverride:
    """Set ``tenant``'s override of ``agent``'s gate for ``tool_id`` (replacing one it had), by
    whoever may change the tenant's configuration."""
    check_may_configure(acting_user, tenant, what=OVERRIDES.format(tenant=tenant.slug), surface=surface)
    errors = []
    if gate not in {value.value for value in GateOverride}:
        errors.append(f"/gate: {gate!r} is not one of: {GATE_OVERRIDE_TEXT}")
    if not isinstance(condition, str):
        errors.append("/condition: must be text")
    if errors:
        raise CatalogInputError(errors)
    override = AgentGateOverride.objects.filter(agent=agent, tenant=tenant, tool_key=tool_id).first()
    override = override or AgentGateOverride(agent=agent, tenant=tenant, tool_key=tool_id)
    override.gate, override.condition, override.changed_by = gate, condition.strip(), acting_user
    try:
        override.full_clean(validate_unique=False, validate_constraints=False)
    except ValidationError as error:
        raise CatalogInputError(
            [
                f"/{_WIRE.get(field, field)}: {message}"
                for field, messages in error.message_dict.items()
                for message in messages
            ]
        ) from None
    return do_save_override(override, acting_user=acting_user, surface=surface)


def override_snapshot(override: AgentGateOverride) -> dict[str, Any]:
    return {
        "agent": f"{override.agent.key}@{override.agent.version}",
        "toolId": override.tool_key,
        "gate": override.gate,
        "condition": override.condition,
    }


OVERRIDE = SettingKind(
    noun="override",
    snapshot=override_snapshot,
    label=lambda override: f"{override.agent.key} → {override.tool_key}",
)


@transaction.atomic
def do_save_override(override: AgentGateOverride, *, acting_user, surface: str) -> AgentGateOverride:
    """Write a valid override, and, for a tenant's, its record in the tenant's audit chain (a
    site-wide one, of no tenant, is the site's: Django's admin log keeps it)."""
    if override.tenant_id is None:
        override.save()
        return override
    return do_save_setting(
        override, kind=OVERRIDE, tenant=override.tenant, acting_user=acting_user, surface=surface
    )


def check_clear_override(*, agent: Agent, tenant, tool_id: str, acting_user, surface: str) -> bool:
    """Clear ``tenant``'s override for ``tool_id``; whether there was one."""
    check_may_configure(acting_user, tenant, what=OVERRIDES.format(tenant=tenant.slug), surface=surface)
    override = AgentGateOverride.objects.filter(agent=agent, tenant=tenant, tool_key=tool_id).first()
    if override is None:
        return False
    do_delete_setting(override, kind=OVERRIDE, tenant=tenant, acting_user=acting_user, surface=surface)
    return True
