"""Which model answers an agent: its scripted model, or a provider's through pydantic-ai."""

from core.conf import setting
from kindgi import AgentDefinition, ScriptedModel
from runs.engine.chat_models import ChatModel, ModelError


def resolve_model(agent: AgentDefinition) -> ChatModel:
    if isinstance(agent.model, ScriptedModel):
        return agent.model
    model_string = agent.model or setting("KINDGI_DEFAULT_MODEL")
    if not model_string:
        raise ModelError(
            f"no-model: agent {agent.id}@{agent.version} names no model and KINDGI_DEFAULT_MODEL is not set"
        )
    # Imported here: pydantic-ai's model layer loads only in processes whose agents use a provider.
    from runs.providers import ProviderModel

    return ProviderModel(model_string)
