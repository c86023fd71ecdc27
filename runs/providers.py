"""Real models through pydantic-ai's model layer: direct requests, no pydantic-ai agent loop.

Model strings: ``openai:<model>`` (key from ``OPENAI_API_KEY``),
``openai-compatible:<model>@<base url>`` for any server that speaks the
chat-completions protocol (key, if it needs one, from
``KINDGI_OPENAI_COMPATIBLE_API_KEY``),
``anthropic:<model>`` (key from ``ANTHROPIC_API_KEY``; needs the ``anthropic``
extra), and any other string pydantic-ai knows. Keys come from the environment
only; they never reach a journal entry or an error message.
"""

import json
import os
import re
from collections.abc import Callable
from typing import Any

from openai import AsyncOpenAI
from pydantic_ai import exceptions as pai_errors
from pydantic_ai.direct import model_request_sync
from pydantic_ai.messages import (
    ModelRequest as PaiRequest,
)
from pydantic_ai.messages import (
    ModelResponse as PaiResponse,
)
from pydantic_ai.messages import (
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models import Model as PaiModel
from pydantic_ai.models import ModelRequestParameters, infer_model
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from pydantic_ai.tools import ToolDefinition

from core.conf import setting
from core.redaction import redact_prompt
from core.secrets import provider_secrets
from kindgi import ModelReply, ModelRequest, ToolCall, Usage
from kindgi.capabilities import model_features
from runs.engine.chat_models import ModelError

_RETRYABLE = (
    pai_errors.ModelRateLimitError,
    pai_errors.ModelUnavailableError,
    pai_errors.ModelServerError,
    pai_errors.ModelConnectionError,
    pai_errors.ModelRequestTimeout,
)
_NAME_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def function_name(tool_id: str) -> str:
    """Providers allow only ``[a-zA-Z0-9_-]`` in function names.

    ``acme-ops.post-update`` becomes ``acme-ops__post-update``.
    """
    return _NAME_UNSAFE.sub("_", tool_id.replace(".", "__"))[:64]


def _timeout() -> float:
    return float(setting("KINDGI_MODEL_TIMEOUT_SECONDS"))


def _openai_client(*, api_key: str, base_url: str | None = None) -> AsyncOpenAI:
    # Kindgi retries, and journals each attempt; the SDK must not retry behind its back.
    return AsyncOpenAI(api_key=api_key, base_url=base_url, max_retries=0, timeout=_timeout())


def build_model(model_string: str) -> PaiModel:
    kind, _, rest = model_string.partition(":")
    if kind == "openai-compatible":
        name, _, base_url = rest.partition("@")
        if not name or not base_url.startswith(("http://", "https://")):
            raise ModelError(
                f"bad-model-string: {model_string!r} must look like "
                "'openai-compatible:<model>@http://host:port/v1'"
            )
        key = os.environ.get("KINDGI_OPENAI_COMPATIBLE_API_KEY") or "not-needed"
        client = _openai_client(api_key=key, base_url=base_url)
        return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))
    if kind == "anthropic":
        return _anthropic_model(rest)
    if kind == "openai":
        key = os.environ.get("OPENAI_API_KEY", "")
        if not key:
            raise ModelError("no-provider-key: set OPENAI_API_KEY to use an openai: model", needs_setup=True)
        return OpenAIChatModel(rest, provider=OpenAIProvider(openai_client=_openai_client(api_key=key)))
    try:
        return infer_model(model_string)
    except Exception as error:
        raise ModelError(f"bad-model-string: {model_string!r}: {_safe(error)}") from None


def _anthropic_model(name: str) -> PaiModel:
    """``anthropic:<model>``: the Messages API, at ``ANTHROPIC_BASE_URL`` if set (a proxy, or a
    server that speaks it), with the key from ``ANTHROPIC_API_KEY``."""
    key = os.environ.get("ANTHROPIC_API_KEY", "")
    if not key:
        raise ModelError(
            "no-provider-key: set ANTHROPIC_API_KEY to use an anthropic: model", needs_setup=True
        )
    try:
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider
    except ImportError:
        raise ModelError(
            "missing-extra: anthropic: models need the anthropic extra (pip install 'kindgi[anthropic]')",
            needs_setup=True,
        ) from None
    client = AsyncAnthropic(
        api_key=key, base_url=os.environ.get("ANTHROPIC_BASE_URL") or None, max_retries=0, timeout=_timeout()
    )
    return AnthropicModel(name, provider=AnthropicProvider(anthropic_client=client))


def _where(model_string: str) -> str:
    """The server a model string names, for a person to check: its base URL, or its provider."""
    kind, _, rest = model_string.partition(":")
    if kind == "openai-compatible":
        return rest.partition("@")[2]
    return f"{kind}'s API"


def _safe(error: Exception) -> str:
    return redact_prompt(str(error), secrets=provider_secrets())


def _content_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)


def to_pydantic_ai(request: ModelRequest) -> list[PaiRequest | PaiResponse]:
    messages: list[PaiRequest | PaiResponse] = []
    for message in request.messages:
        role = message["role"]
        if role == "assistant":
            parts: list[Any] = [TextPart(content=message["content"])] if message.get("content") else []
            parts += [
                ToolCallPart(
                    tool_name=function_name(call["toolId"]),
                    args=dict(call["arguments"])
                    if isinstance(call["arguments"], dict)
                    else call["arguments"],
                    tool_call_id=call["id"],
                )
                for call in message.get("toolCalls", [])
            ]
            messages.append(PaiResponse(parts=parts))
            continue
        if role == "user":
            part: Any = UserPromptPart(content=message["content"])
        else:
            part = ToolReturnPart(
                tool_name=function_name(message["toolId"]),
                content=_content_text(message["content"]),
                tool_call_id=message["callId"],
            )
        if messages and isinstance(messages[-1], PaiRequest) and role == "tool":
            messages[-1] = PaiRequest(parts=[*messages[-1].parts, part], instructions=request.instructions)
        else:
            messages.append(PaiRequest(parts=[part], instructions=request.instructions))
    return messages


def from_pydantic_ai(response: PaiResponse, *, tool_ids: dict[str, str]) -> ModelReply:
    text = "".join(part.content for part in response.parts if isinstance(part, TextPart))
    calls = []
    for part in response.parts:
        if not isinstance(part, ToolCallPart):
            continue
        try:
            arguments = part.args_as_dict(raise_if_invalid=True)
        except Exception:
            raise ModelError(
                f"bad-tool-call: the model's arguments for {part.tool_name!r} are not a JSON object"
            ) from None
        calls.append(
            ToolCall(
                id=part.tool_call_id,
                tool_id=tool_ids.get(part.tool_name, part.tool_name),
                arguments=arguments,
            )
        )
    usage = response.usage
    return ModelReply(
        text=text,
        tool_calls=tuple(calls),
        usage=Usage(input_tokens=usage.input_tokens or 0, output_tokens=usage.output_tokens or 0),
    )


class ProviderModel:
    def __init__(self, model_string: str, *, hint: Callable[[], str] = lambda: ""):
        self.model_name = model_string
        self.features = model_features(model_string)
        self._model = build_model(model_string)
        self._hint = hint  # what to try without a model, said when this one cannot be reached

    def respond(self, request: ModelRequest) -> ModelReply:
        tool_ids = {function_name(spec.id): spec.id for spec in request.tools}
        parameters = ModelRequestParameters(
            function_tools=[
                ToolDefinition(
                    name=function_name(spec.id),
                    description=spec.description,
                    parameters_json_schema=dict(spec.input_schema),
                )
                for spec in request.tools
            ]
        )
        try:
            response = model_request_sync(
                self._model, to_pydantic_ai(request), model_request_parameters=parameters
            )
        except pai_errors.ModelConnectionError as error:
            raise ModelError(self._unreachable(error), retryable=True, needs_setup=True) from None
        except _RETRYABLE as error:
            raise ModelError(f"{type(error).__name__}: {_safe(error)}", retryable=True) from None
        except pai_errors.ModelHTTPError as error:
            retryable = error.status_code == 429 or error.status_code >= 500
            raise ModelError(f"{type(error).__name__}: {_safe(error)}", retryable=retryable) from None
        except (pai_errors.ModelAPIError, pai_errors.UnexpectedModelBehavior) as error:
            raise ModelError(f"{type(error).__name__}: {_safe(error)}") from None
        return from_pydantic_ai(response, tool_ids=tool_ids)

    def _unreachable(self, error: Exception) -> str:
        where = _where(self.model_name)
        start = " (Ollama listens there: `ollama pull llama3.2 && ollama serve`)" if ":11434" in where else ""
        return (
            f"model-unreachable: cannot reach {where} for the model {self.model_name!r} "
            f"({type(error).__name__}: {_safe(error)}): is its server running{start}? Or give the agent "
            f"another model (docs/packs.md, Models).{self._hint()}"
        )
