"""What answers an agent: the model protocol the engine talks to, and how a model fails.

The kernel reaches no provider: the driver hands it a way to choose a model
(``runs.model_resolution``); on its own it has only the agent's scripted model."""

from typing import Protocol

from kindgi import AgentDefinition, ModelReply, ModelRequest, ScriptedModel


class ModelError(Exception):
    """A model could not answer. ``retryable`` says whether asking again may help;
    ``needs_setup``, that the model is not set up here (no key, its server not running)."""

    def __init__(self, message: str, *, retryable: bool = False, needs_setup: bool = False):
        super().__init__(message)
        self.message = message
        self.retryable = retryable
        self.needs_setup = needs_setup


class ChatModel(Protocol):
    model_name: str
    # What it can do (``kindgi.capabilities.FEATURES``), checked before it is asked.
    features: frozenset[str]

    def respond(self, request: ModelRequest) -> ModelReply: ...


def scripted_model(agent: AgentDefinition) -> ChatModel:
    """The agent's scripted model: all the kernel can reach on its own."""
    if isinstance(agent.model, ScriptedModel):
        return agent.model
    raise ModelError(
        f"no-model: agent {agent.id}@{agent.version} needs a provider's model, "
        "which only a Kindgi site reaches (runs.model_resolution)"
    )
