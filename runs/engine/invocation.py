"""Calling one tool: check its input, call it, and turn every failure into data for the model.

The model never sees an exception. Invalid input never reaches the tool; the
model gets ``{"success": false, "error": {code, message, retryable,
recommendedAction}, "stateChanged": false}`` with at most ``INPUT_ERROR_LIMIT``
field errors, each ``/<json-pointer>: <message>``. A ``ToolError`` the tool
raises comes back the same way with its own code and hint; any other exception
becomes ``TOOL_FAILED``, its traceback kept for the journal only.
"""

import json
import time
import traceback
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ValidationError

from core.jsonlimits import holds_nul, nesting_depth_exceeds, without_nul
from kindgi import ToolContext, ToolDefinition, ToolError
from kindgi.mcp import MCP_SERVER_UNAVAILABLE, MCP_TIMEOUT, McpTool
from runs.engine.limits import DEFAULT_LIMITS, Limits
from runs.engine.validation import INPUT_ERROR_LIMIT, field_errors, json_pointer, strictly_validate

INVALID_TOOL_INPUT = "INVALID_TOOL_INPUT"
INVALID_TOOL_OUTPUT = "INVALID_TOOL_OUTPUT"
TOOL_FAILED = "TOOL_FAILED"

# Errors that are Kindgi's word about a call (its input did not fit, its server was not reached),
# not anything the tool or its server returned: never shown to the model as outside data.
OWN_ERROR_CODES = frozenset({INVALID_TOOL_INPUT, MCP_SERVER_UNAVAILABLE, MCP_TIMEOUT})


def is_own_error(result: Any) -> bool:
    """Whether ``result`` is error data Kindgi made (``OWN_ERROR_CODES``)."""
    error = result.get("error") if isinstance(result, dict) else None
    return isinstance(error, dict) and error.get("code") in OWN_ERROR_CODES


class CallStatus(StrEnum):
    COMPLETED = "completed"
    FAILED = "failed"


@dataclass(frozen=True, kw_only=True)
class Invocation:
    status: CallStatus
    # What the model receives: the tool's output, or error data.
    result: Any
    duration_ms: int
    traceback: str = field(default="", repr=False)


def error_data(code: str, message: str, *, retryable: bool, recommended_action: str = "") -> dict[str, Any]:
    return {
        "success": False,
        "error": {
            "code": code,
            "message": message,
            "retryable": retryable,
            "recommendedAction": recommended_action,
        },
        "stateChanged": False,
    }


@dataclass(frozen=True, kw_only=True)
class InvalidArguments:
    """Why a call's arguments do not fit its tool: at most five field errors, and how many more."""

    errors: tuple[str, ...]
    more: int = 0
    too_big: bool = False

    def as_data(self) -> dict[str, Any]:
        if self.too_big:
            message = "The tool input is invalid: " + self.errors[0].removeprefix("/: ")
            return error_data(
                INVALID_TOOL_INPUT,
                message,
                retryable=True,
                recommended_action="Send smaller, flatter arguments.",
            )
        message = "The tool input is invalid: " + "; ".join(self.errors)
        if self.more:
            message += f" (and {self.more} more)"
        return error_data(
            INVALID_TOOL_INPUT,
            message,
            retryable=True,
            recommended_action="Correct the invalid field and retry the request.",
        )


def oversized_arguments(arguments: Any, limits: Limits) -> str | None:
    """Why arguments are too big to validate, or None."""
    depth = limits.max_json_depth
    if nesting_depth_exceeds(arguments, depth):
        return f"the arguments nest more than {depth} levels deep"
    if holds_nul(arguments):
        return "the arguments hold a NUL character (\\u0000)"
    limit = limits.max_tool_arguments_bytes
    size = len(json.dumps(arguments, default=str).encode())
    if size > limit:
        return f"the arguments are {size} bytes of JSON, more than the limit of {limit}"
    return None


def check_arguments(tool: ToolDefinition, arguments: Any, limits: Limits) -> BaseModel | InvalidArguments:
    """The tool's input, validated strictly (an unknown field is an error), or why not."""
    if (refusal := oversized_arguments(arguments, limits)) is not None:
        return InvalidArguments(errors=(f"/: {refusal}",), too_big=True)
    if isinstance(tool, McpTool):
        return _check_against_schema(tool, arguments)
    try:
        return strictly_validate(tool.input_model, arguments)
    except ValidationError as error:
        listed = field_errors(error, tool.input_model)
        return InvalidArguments(errors=tuple(listed), more=error.error_count() - len(listed))


def _check_against_schema(tool: McpTool, arguments: Any) -> BaseModel | InvalidArguments:
    """An MCP tool's input has no pydantic model: the server's JSON schema judges it, and, as for
    a pack's tool, a field the schema does not name is refused (servers' schemas seldom forbid
    other fields, which would let an edit add what the model never asked for) unless the schema
    says that others are welcome."""
    if not isinstance(arguments, dict):
        return InvalidArguments(errors=(f"/: must be an object, not {type(arguments).__name__}",))
    try:
        validator = Draft202012Validator(tool.input_schema)
        errors = sorted(
            validator.iter_errors(arguments), key=lambda error: [str(part) for part in error.absolute_path]
        )
        found = [(list(error.absolute_path), error.message) for error in errors]
    except SchemaError as error:
        return InvalidArguments(errors=(f"/: the server's input schema is invalid: {error.message}",))
    found += _unknown_fields(tool.input_schema, arguments)
    if found:
        listed = tuple(f"{json_pointer(path)}: {message}" for path, message in found[:INPUT_ERROR_LIMIT])
        return InvalidArguments(errors=listed, more=len(found) - len(listed))
    return tool.input_model.model_validate(arguments)


def _unknown_fields(schema: dict[str, Any], arguments: dict[str, Any]) -> list[tuple[list[str], str]]:
    """The top-level fields that a schema naming its fields does not name, when the schema says
    nothing of others (one that says ``additionalProperties`` has been heard by its validator)."""
    named = schema.get("properties")
    if not isinstance(named, dict) or "additionalProperties" in schema:
        return []
    known = ", ".join(sorted(named)) or "none"
    unknown = sorted(name for name in arguments if name not in named)
    return [([name], f"unknown field (the fields are: {known})") for name in unknown]


def validate_arguments(
    tool: ToolDefinition, arguments: Any, limits: Limits
) -> tuple[BaseModel | None, dict[str, Any] | None]:
    """The validated input, or the error data the model receives instead."""
    checked = check_arguments(tool, arguments, limits)
    if isinstance(checked, InvalidArguments):
        return None, checked.as_data()
    return checked, None


def dump_output(tool: ToolDefinition, value: Any) -> Any:
    """The tool's output as JSON, checked against its output type."""
    output = tool.output_model.model_validate(value.model_dump() if isinstance(value, BaseModel) else value)
    return output.model_dump(mode="json", by_alias=True)


def invoke(
    tool: ToolDefinition, arguments: Any, context: ToolContext, *, limits: Limits = DEFAULT_LIMITS
) -> Invocation:
    """Call ``tool``. ``arguments`` is its validated input (as the call policy leaves it) or JSON,
    which is checked here first, within ``limits``: nothing invalid reaches a tool, whoever
    calls this."""
    started = time.perf_counter()

    def finished(status: CallStatus, result: Any, trace: str = "") -> Invocation:
        duration = round((time.perf_counter() - started) * 1000)
        return Invocation(status=status, result=result, duration_ms=duration, traceback=trace)

    tool_input = arguments
    if not isinstance(arguments, tool.input_model):
        tool_input = check_arguments(tool, arguments, limits)
        if isinstance(tool_input, InvalidArguments):
            return finished(CallStatus.FAILED, tool_input.as_data())
    try:
        value = tool(tool_input, context) if tool.takes_context else tool(tool_input)
    except ToolError as error:
        result = error_data(
            error.code, error.message, retryable=error.retryable, recommended_action=error.recommended_action
        )
        return finished(CallStatus.FAILED, result)
    except Exception as error:
        result = error_data(
            TOOL_FAILED,
            f"The tool failed unexpectedly ({type(error).__name__}).",
            retryable=False,
            recommended_action="Do not retry; tell the user the tool failed.",
        )
        return finished(CallStatus.FAILED, result, traceback.format_exc())
    try:
        result = without_nul(dump_output(tool, value))  # storable, whatever the tool returned
    except ValidationError as error:
        result = error_data(
            INVALID_TOOL_OUTPUT,
            "The tool returned output that does not match its output type: "
            + "; ".join(field_errors(error, tool.output_model)),
            retryable=False,
            recommended_action="Do not retry; tell the user the tool failed.",
        )
        return finished(CallStatus.FAILED, result)
    return finished(CallStatus.COMPLETED, result)
