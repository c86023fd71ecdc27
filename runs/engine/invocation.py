"""Calling one tool: validate its input, call it, and turn every failure into data for the model.

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
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from django.conf import settings
from pydantic import BaseModel, ValidationError

from kindgi import ToolContext, ToolDefinition, ToolError
from kindgi_site.jsonlimits import holds_nul, nesting_depth_exceeds, without_nul
from runs.metrics import TOOL_CALL_SECONDS

INPUT_ERROR_LIMIT = 5
INVALID_TOOL_INPUT = "INVALID_TOOL_INPUT"
INVALID_TOOL_OUTPUT = "INVALID_TOOL_OUTPUT"
TOOL_FAILED = "TOOL_FAILED"


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


def json_pointer(location: Iterable[str | int]) -> str:
    parts = [str(part).replace("~", "~0").replace("/", "~1") for part in location]
    return "/" + "/".join(parts)


def field_errors(error: ValidationError, *, limit: int = INPUT_ERROR_LIMIT) -> list[str]:
    """``/<json-pointer>: <message>`` for at most ``limit`` of the errors."""
    return [f"{json_pointer(item['loc'])}: {item['msg']}" for item in error.errors()[:limit]]


def oversized_arguments(arguments: Any) -> str | None:
    """Why arguments are too big to validate, or None."""
    depth = settings.KINDGI_MAX_JSON_DEPTH
    if nesting_depth_exceeds(arguments, depth):
        return f"the arguments nest more than {depth} levels deep"
    if holds_nul(arguments):
        return "the arguments hold a NUL character (\\u0000)"
    limit = settings.KINDGI_MAX_TOOL_ARGUMENTS_BYTES
    size = len(json.dumps(arguments, default=str).encode())
    if size > limit:
        return f"the arguments are {size} bytes of JSON, more than the limit of {limit}"
    return None


def validate_arguments(
    tool: ToolDefinition, arguments: Any
) -> tuple[BaseModel | None, dict[str, Any] | None]:
    """Return the validated input, or the error data the model receives instead."""
    if (refusal := oversized_arguments(arguments)) is not None:
        return None, error_data(
            INVALID_TOOL_INPUT,
            f"The tool input is invalid: {refusal}",
            retryable=True,
            recommended_action="Send smaller, flatter arguments.",
        )
    try:
        return tool.input_model.model_validate(arguments), None
    except ValidationError as error:
        listed = field_errors(error)
        hidden = error.error_count() - len(listed)
        message = "The tool input is invalid: " + "; ".join(listed)
        if hidden:
            message += f" (and {hidden} more)"
        return None, error_data(
            INVALID_TOOL_INPUT,
            message,
            retryable=True,
            recommended_action="Correct the invalid field and retry the request.",
        )


def dump_output(tool: ToolDefinition, value: Any) -> Any:
    """The tool's output as JSON, checked against its output type."""
    output = tool.output_model.model_validate(value.model_dump() if isinstance(value, BaseModel) else value)
    return output.model_dump(mode="json", by_alias=True)


def invoke(tool: ToolDefinition, arguments: Any, context: ToolContext) -> Invocation:
    started = time.perf_counter()
    invocation = _invoke(tool, arguments, context, started)
    TOOL_CALL_SECONDS.labels(tool=tool.id, outcome=invocation.status.value).observe(
        time.perf_counter() - started
    )
    return invocation


def _invoke(tool: ToolDefinition, arguments: Any, context: ToolContext, started: float) -> Invocation:

    def elapsed() -> int:
        return round((time.perf_counter() - started) * 1000)

    tool_input, invalid = validate_arguments(tool, arguments)
    if invalid is not None:
        return Invocation(status=CallStatus.FAILED, result=invalid, duration_ms=elapsed())
    try:
        value = tool(tool_input, context) if tool.takes_context else tool(tool_input)
    except ToolError as error:
        result = error_data(
            error.code,
            error.message,
            retryable=error.retryable,
            recommended_action=error.recommended_action,
        )
        return Invocation(status=CallStatus.FAILED, result=result, duration_ms=elapsed())
    except Exception as error:
        result = error_data(
            TOOL_FAILED,
            f"The tool failed unexpectedly ({type(error).__name__}).",
            retryable=False,
            recommended_action="Do not retry; tell the user the tool failed.",
        )
        return Invocation(
            status=CallStatus.FAILED,
            result=result,
            duration_ms=elapsed(),
            traceback=traceback.format_exc(),
        )
    try:
        result = without_nul(dump_output(tool, value))  # storable, whatever the tool returned
    except ValidationError as error:
        result = error_data(
            INVALID_TOOL_OUTPUT,
            "The tool returned output that does not match its output type: " + "; ".join(field_errors(error)),
            retryable=False,
            recommended_action="Do not retry; tell the user the tool failed.",
        )
        return Invocation(status=CallStatus.FAILED, result=result, duration_ms=elapsed())
    return Invocation(status=CallStatus.COMPLETED, result=result, duration_ms=elapsed())
