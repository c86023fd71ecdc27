"""Which model answers an agent: its scripted model, or a provider's through pydantic-ai."""

from typing import Protocol

from django.conf import settings

from kindgi import AgentDefinition, ModelReply, ModelRequest, ScriptedModel


class ModelError(Exception):
    """A model could not answer. ``retryable`` says whether asking again may help."""

    def __init__(self, message: str, *, retryable: bool = False):
        super().__init__(message)
        self.message = message
        self.retryable = retryable


class ChatModel(Protocol):
    model_name: str

    def respond(self, request: ModelRequest) -> ModelReply: ...


def resolve_model(agent: AgentDefinition) -> ChatModel:
    if isinstance(agent.model, ScriptedModel):
        return agent.model
    model_string = agent.model or getattr(settings, "KINDGI_DEFAULT_MODEL", "")
    if not model_string:
        raise ModelError(
            f"no-model: agent {agent.id}@{agent.version} names no model and KINDGI_DEFAULT_MODEL is not set"
        )
    from runs.engine.providers import ProviderModel

    return ProviderModel(model_string)
