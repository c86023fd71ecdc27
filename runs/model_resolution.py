"""Which model answers an agent: its scripted model, or a provider's through pydantic-ai.

A model that is not set up (no model named, no key, its server not running) fails the turn with
what to set, and which agents of the catalog need no model at all, for a first hour that does
not end at "Connection error"."""

from core.conf import setting
from kindgi import AgentDefinition, ScriptedModel
from runs.engine.chat_models import ChatModel, ModelError


def resolve_model(agent: AgentDefinition) -> ChatModel:
    if isinstance(agent.model, ScriptedModel):
        return agent.model
    model_string = agent.model or setting("KINDGI_DEFAULT_MODEL")
    if not model_string:
        raise ModelError(
            f"no-model: agent {agent.id}@{agent.version} names no model and KINDGI_DEFAULT_MODEL is not "
            "set: set it to a model string, e.g. openai:gpt-4.1-mini (with OPENAI_API_KEY) or "
            f"openai-compatible:llama3.2@http://127.0.0.1:11434/v1 (Ollama).{without_a_model()}"
        )
    # Imported here: pydantic-ai's model layer loads only in processes whose agents use a provider.
    from runs.providers import ProviderModel

    try:
        return ProviderModel(model_string, hint=without_a_model)
    except ModelError as error:
        if error.needs_setup:
            raise ModelError(f"{error.message}.{without_a_model()}", retryable=error.retryable) from None
        raise


def without_a_model() -> str:
    """A sentence naming the catalog's agents that answer with a scripted model ("" without a
    catalog: ``kindgi.testing`` runs one pack with no site)."""
    from django.conf import settings

    from kindgi import DefinitionErrors
    from tools.registry import get_registry

    if not hasattr(settings, "KINDGI_PACKS"):
        return ""
    try:
        agents = get_registry().agents
    except DefinitionErrors:
        return ""
    scripted = sorted({key[0] for key, agent in agents.items() if isinstance(agent.model, ScriptedModel)})
    if not scripted:
        return ""
    return f" To try Kindgi without a model, run an agent with a scripted one: {', '.join(scripted[:5])}."
