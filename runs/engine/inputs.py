"""The input model of an agent turn: ``userMessage`` plus the agent's declared parameters."""

import functools
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from kindgi import AgentDefinition

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
    fields: dict[str, Any] = {"userMessage": (Annotated[str, Field(min_length=1)], ...)}
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
