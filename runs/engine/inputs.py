"""A run's input: what a flow's input model or an agent turn's (``userMessage``, a mail-started
turn's ``mail``, and the agent's declared parameters) accepts, refusing unknown fields, and a
user's prompt redacted."""

import functools
from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from core.redaction import redact_prompt
from kindgi import AgentDefinition, FlowDefinition
from runs.engine.validation import field_errors, strictly_validate
from runs.exceptions import RunInputError

_JSON_TYPES: dict[str, Any] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "object": dict,
    "array": list,
}


@functools.cache
def _model_for(agent_id: str, version: str, parameters: tuple) -> type[BaseModel]:
    fields: dict[str, Any] = {
        "userMessage": (Annotated[str, Field(min_length=1)], ...),
        # A mail-started turn's mail: the model reads it as outside data, never as instructions.
        "mail": (dict | None, None),
    }
    for name, json_type, required in parameters:
        python_type = _JSON_TYPES.get(json_type, Any)
        fields[name] = (python_type, ...) if required else (python_type | None, None)
    return create_model(
        f"AgentTurnInput[{agent_id}@{version}]",
        __config__=ConfigDict(extra="forbid", strict=False),
        **fields,
    )


def agent_input_model(agent: AgentDefinition) -> type[BaseModel]:
    parameters = tuple((p.name, p.schema.get("type"), p.required) for p in agent.parameters)
    return _model_for(agent.id, agent.version, parameters)


def validate_run_input(
    target: FlowDefinition | AgentDefinition, data: Any, *, secrets: Iterable[str] = ()
) -> dict[str, Any]:
    """The input as the run will store it, or ``RunInputError`` naming each bad field. A
    person's message loses its credentials, home paths and each of ``secrets`` (the provider
    keys, which the driver also scrubs from everything it stores)."""
    model = target.input_model if isinstance(target, FlowDefinition) else agent_input_model(target)
    try:
        validated = strictly_validate(model, data)
    except ValidationError as error:
        raise RunInputError(field_errors(error, model)) from None
    value = validated.model_dump(mode="json", by_alias=True, exclude_unset=False)
    if isinstance(target, AgentDefinition):
        value["userMessage"] = redact_prompt(value["userMessage"], secrets=secrets)
        if value.get("mail") is None:
            value.pop("mail", None)
    return value
