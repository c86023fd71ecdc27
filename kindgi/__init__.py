"""What pack authors import: tools, effects, agents, flows and packs.

from kindgi import Effect, ToolContext, tool

@tool(id="my-pack.lookup-order", version="0.1.0", mutating=False,
      effects=[Effect.reads("external:orders")])
def lookup_order(ref: OrderRef, ctx: ToolContext) -> Order: ...

And what a service embedding Kindgi imports: ``kindgi.Client`` and ``kindgi.AsyncClient``, the
API's typed client (``kindgi.client``; loaded when first named).
"""

from kindgi.agents import AgentDefinition, AgentParameter, GateOverride, ToolRef, define_agent
from kindgi.effects import MUTATING_EFFECT_KINDS, Effect, EffectKind
from kindgi.errors import DefinitionError, DefinitionErrors, KindgiError, ToolError
from kindgi.flows import (
    FlowDefinition,
    FlowNode,
    agent_step,
    define_flow,
    from_input,
    from_node,
    tool_step,
)
from kindgi.guardrails import BeforeToolGuardrail, GuardedCall, Judgement, allow, before_tool, refuse
from kindgi.models import ModelReply, ModelRequest, ScriptedModel, ToolCall, ToolSpec, Usage, scripted
from kindgi.packs import Pack, define_pack
from kindgi.registry import Registry, build_registry, load_registry
from kindgi.schema import CamelModel
from kindgi.tools import Execution, ToolConnection, ToolContext, ToolDefinition, ToolOrigin, tool

# The API's client, loaded when first asked for: a pack's import of kindgi does not load httpx.
_CLIENT = ("ApiError", "AsyncClient", "Client")


def __getattr__(name: str):
    if name in _CLIENT:
        import kindgi.client

        return getattr(kindgi.client, name)
    raise AttributeError(f"module 'kindgi' has no attribute {name!r}")


__all__ = [
    "MUTATING_EFFECT_KINDS",
    "AgentDefinition",
    "AgentParameter",
    "ApiError",
    "AsyncClient",
    "BeforeToolGuardrail",
    "CamelModel",
    "Client",
    "DefinitionError",
    "DefinitionErrors",
    "Effect",
    "EffectKind",
    "Execution",
    "FlowDefinition",
    "FlowNode",
    "GateOverride",
    "GuardedCall",
    "Judgement",
    "KindgiError",
    "ModelReply",
    "ModelRequest",
    "Pack",
    "Registry",
    "ScriptedModel",
    "ToolCall",
    "ToolConnection",
    "ToolContext",
    "ToolDefinition",
    "ToolError",
    "ToolOrigin",
    "ToolRef",
    "ToolSpec",
    "Usage",
    "agent_step",
    "allow",
    "before_tool",
    "build_registry",
    "define_agent",
    "define_flow",
    "define_pack",
    "from_input",
    "from_node",
    "load_registry",
    "refuse",
    "scripted",
    "tool",
    "tool_step",
]
