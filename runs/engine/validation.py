"""Validating JSON against a pydantic model the way every door of Kindgi does: strictly (a field
the model does not declare is refused, never dropped) and with errors that name each field as
``/<json-pointer>: <message>``, at most ``INPUT_ERROR_LIMIT`` of them."""

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ValidationError

INPUT_ERROR_LIMIT = 5


def json_pointer(location: Iterable[str | int]) -> str:
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in location]
    return "/" + "/".join(parts)


def extra_policy(model: type[BaseModel]) -> Literal["forbid"] | None:
    """Refuse unknown fields unless the model itself says what to do with them (``extra=``)."""
    return "forbid" if model.model_config.get("extra") is None else None


def strictly_validate(model: type[BaseModel], data: Any) -> BaseModel:
    """``model.model_validate(data)``, refusing unknown fields; raises ``ValidationError``."""
    return model.model_validate(data, extra=extra_policy(model))


def field_errors(
    error: ValidationError, model: type[BaseModel], *, limit: int = INPUT_ERROR_LIMIT
) -> list[str]:
    """``/<json-pointer>: <message>`` for at most ``limit`` of the errors; an unknown field's
    message names the fields the model knows (at the top level)."""
    known = ", ".join(field.alias or name for name, field in model.model_fields.items())
    lines = []
    for item in error.errors()[:limit]:
        message = item["msg"]
        if item["type"] == "extra_forbidden":
            message = f"unknown field (the fields are: {known})" if len(item["loc"]) == 1 else "unknown field"
        lines.append(f"{json_pointer(item['loc'])}: {message}")
    return lines
