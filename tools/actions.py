"""Setting and clearing an agent's admin overrides: the one way they are written from the API.

The admin's inline validates through the same model checks (``AgentGateOverride.clean``): the
tool must be one of the agent's, the gate ``always_ask`` or ``never_ask``, the condition one
that parses.
"""

from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from kindgi.agents import GATE_OVERRIDE_TEXT, GateOverride
from tools.exceptions import CatalogInputError
from tools.models import Agent, AgentGateOverride

_WIRE = {"tool_key": "toolId", "gate": "gate", "condition": "condition"}


def check_set_override(
    *, agent: Agent, tenant, tool_id: str, gate: Any, condition: Any, acting_user
) -> AgentGateOverride:
    """Set ``tenant``'s override of ``agent``'s gate for ``tool_id`` (replacing one it had)."""
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
    return do_save_override(override)


@transaction.atomic(durable=True)
def do_save_override(override: AgentGateOverride) -> AgentGateOverride:
    override.save()
    return override


@transaction.atomic(durable=True)
def do_clear_override(*, agent: Agent, tenant, tool_id: str) -> bool:
    """Clear ``tenant``'s override for ``tool_id``; whether there was one."""
    deleted, _ = AgentGateOverride.objects.filter(agent=agent, tenant=tenant, tool_key=tool_id).delete()
    return bool(deleted)
