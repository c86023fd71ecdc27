"""The one small interface between the engine and a model, and scripted models.

A model receives a ``ModelRequest`` (instructions, the conversation so far and
the tools it may call) and answers with a ``ModelReply``: text, tool calls, or
both. Scripted models answer with a Python function: deterministic, no
network. They drive the sample packs and the tests.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kindgi.capabilities import check_features
from kindgi.errors import DefinitionError

# What a scripted model can do unless it says otherwise: its script answers with tool calls
# or text, which may be JSON.
SCRIPTED_FEATURES = ("tool-use", "structured-output")


@dataclass(frozen=True, kw_only=True)
class ToolCall:
    """One call the model asks for. ``id`` is the model's own id for the call."""

    id: str
    tool_id: str
    arguments: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"inputTokens": self.input_tokens, "outputTokens": self.output_tokens}


@dataclass(frozen=True, kw_only=True)
class ModelReply:
    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    usage: Usage = Usage()


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """A tool as the model sees it."""

    id: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class ModelRequest:
    """What the model is sent: messages are the run's conversation, as the model should read it.

    Messages have ``role`` ``user`` (``content``: text), ``assistant``
    (``content``: text, ``toolCalls``) or ``tool`` (``callId``, ``toolId``,
    ``content``: the result).
    """

    instructions: str
    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[ToolSpec, ...]

    @property
    def last_user_message(self) -> str:
        for message in reversed(self.messages):
            if message["role"] == "user":
                return message["content"]
        return ""

    @property
    def results_since_user(self) -> list[Mapping[str, Any]]:
        """The tool results that arrived after the latest user message, in order."""
        results: list[Mapping[str, Any]] = []
        for message in reversed(self.messages):
            if message["role"] == "user":
                break
            if message["role"] == "tool":
                results.append(message)
        results.reverse()  # inserting each at the front made a long turn's step quadratic
        return results


class ScriptedModel:
    """A model whose answers come from ``script(request) -> ModelReply``; ``features`` are what
    it can do, for the agents whose ``capabilities`` need some."""

    def __init__(
        self,
        script: Callable[[ModelRequest], ModelReply],
        *,
        name: str | None = None,
        features: Iterable[str] = SCRIPTED_FEATURES,
    ):
        if not callable(script):
            raise DefinitionError(f"a scripted model needs a callable script, not {script!r}")
        self.script = script
        self.name = name or f"{script.__module__}.{script.__qualname__}"
        self.features = check_features(features, what=f"scripted model {self.name}: features")

    def __repr__(self) -> str:
        return f"ScriptedModel({self.name})"

    @property
    def model_name(self) -> str:
        return f"scripted:{self.name}"

    def respond(self, request: ModelRequest) -> ModelReply:
        return self.script(request)


def scripted(
    script: Callable[[ModelRequest], ModelReply] | None = None, *, features: Iterable[str] = SCRIPTED_FEATURES
) -> Any:
    """Decorate a function to use it as an agent's model: ``define_agent(model=my_script, …)``.
    ``@scripted(features=["tool-use", "vision"])`` says what it can do."""
    if script is None:
        return lambda function: ScriptedModel(function, features=features)
    return ScriptedModel(script, features=features)
