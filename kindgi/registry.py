"""The definitions of a set of packs, checked against each other and resolved."""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from kindgi.agents import RETRIEVAL_QUERY, AgentDefinition, ToolRef
from kindgi.errors import DefinitionError, DefinitionErrors
from kindgi.flows import AGENT_STEP_OUTPUT_SCHEMA, FlowDefinition, FlowNode, NodeKind, iter_refs
from kindgi.naming import pack_of, semver_key
from kindgi.packs import Pack, import_pack
from kindgi.tools import ToolDefinition

Key = tuple[str, str]


@dataclass(frozen=True)
class Registry:
    """Every loaded definition by (id, version). References inside are resolved to exact versions."""

    packs: tuple[Pack, ...]
    tools: Mapping[Key, ToolDefinition]
    agents: Mapping[Key, AgentDefinition]
    flows: Mapping[Key, FlowDefinition]

    def tool(self, tool_id: str, version: str | None = None) -> ToolDefinition | None:
        return _find(self.tools, tool_id, version)

    def agent(self, agent_id: str, version: str | None = None) -> AgentDefinition | None:
        return _find(self.agents, agent_id, version)

    def flow(self, flow_id: str, version: str | None = None) -> FlowDefinition | None:
        return _find(self.flows, flow_id, version)


def _find(definitions: Mapping[Key, Any], definition_id: str, version: str | None) -> Any:
    if version is not None:
        return definitions.get((definition_id, version))
    versions = [v for (i, v) in definitions if i == definition_id]
    if not versions:
        return None
    return definitions[(definition_id, max(versions, key=semver_key))]


def load_registry(module_paths: Iterable[str]) -> Registry:
    """Import the packs named in settings and build their registry, reporting every error at once."""
    packs, errors = [], []
    for module_path in module_paths:
        try:
            packs.append(import_pack(module_path))
        except DefinitionError as error:
            errors.append(str(error))
    try:
        registry = build_registry(packs)
    except DefinitionErrors as more:
        errors.extend(more.errors)
    if errors:
        raise DefinitionErrors(errors)
    return registry


def build_registry(packs: Iterable[Pack]) -> Registry:
    """Check the packs' definitions against each other; raise ``DefinitionErrors`` listing them all."""
    packs = tuple(packs)
    errors: list[str] = []
    tools: dict[Key, ToolDefinition] = {}
    agents: dict[Key, AgentDefinition] = {}
    flows: dict[Key, FlowDefinition] = {}

    pack_names: dict[str, str] = {}
    for pack in packs:
        if pack.name in pack_names:
            errors.append(
                f"pack {pack.name!r} is defined twice (modules {pack_names[pack.name]!r} and {pack.module!r})"
            )
        pack_names[pack.name] = pack.module
        for kind, definitions, table in (
            ("tool", pack.tools, tools),
            ("agent", pack.agents, agents),
            ("flow", pack.flows, flows),
        ):
            for definition in definitions:
                label = f"{kind} {definition.id}@{definition.version}"
                if pack_of(definition.id) != pack.name:
                    errors.append(
                        f"{label}: id must start with its pack's name, '{pack.name}.' "
                        f"(it is listed in pack {pack.name!r})"
                    )
                key = (definition.id, definition.version)
                if key in table:
                    errors.append(f"{label}: defined twice (id and version must be unique)")
                    continue
                table[key] = definition

    resolved_agents = {}
    for key, agent in agents.items():
        resolved_agents[key] = _resolve_agent(agent, tools, pack_names, errors)
    resolved_flows = {}
    for key, flow in flows.items():
        resolved_flows[key] = _resolve_flow(flow, tools, resolved_agents, pack_names, errors)

    if errors:
        raise DefinitionErrors(errors)
    return Registry(packs=packs, tools=tools, agents=resolved_agents, flows=resolved_flows)


def _resolve_version(
    kind: str, definitions: Mapping[Key, Any], definition_id: str, version: str | None
) -> tuple[Any | None, str | None]:
    """Find a referenced definition; return it, or None and the reason it is missing."""
    versions = sorted((v for (i, v) in definitions if i == definition_id), key=semver_key)
    if not versions:
        return None, f"references unknown {kind} {definition_id!r}"
    if version is None:
        return definitions[(definition_id, versions[-1])], None
    if version not in versions:
        return None, (
            f"references {kind} {definition_id!r} version {version}, which is not loaded "
            f"(loaded versions: {', '.join(versions)})"
        )
    return definitions[(definition_id, version)], None


def _resolve_agent(
    agent: AgentDefinition, tools: Mapping[Key, ToolDefinition], pack_names: Iterable[str], errors: list[str]
) -> AgentDefinition:
    resolved: list[ToolRef] = []
    for index, ref in enumerate(agent.tools):
        if pack_of(ref.id) not in pack_names:
            # Not a pack's: an MCP server's tool, found at run time among the tenant's servers.
            resolved.append(ToolRef(id=ref.id))
            continue
        found, problem = _resolve_version("tool", tools, ref.id, ref.version)
        if problem:
            errors.append(f"{agent.label}: tools[{index}]: {problem}")
            resolved.append(ref)
        else:
            resolved.append(ToolRef(id=found.id, version=found.version))
    sources = [
        _resolve_retrieval(agent, index, ref, tools, errors) for index, ref in enumerate(agent.retrieval)
    ]
    return replace(agent, tools=tuple(resolved), retrieval=tuple(sources))


def _resolve_retrieval(
    agent: AgentDefinition, index: int, ref: ToolRef, tools: Mapping[Key, ToolDefinition], errors: list[str]
) -> ToolRef:
    """A retrieval source: a pack's read-only tool that takes ``{"query": <text>}``."""
    where = f"{agent.label}: retrieval[{index}]"
    found, problem = _resolve_version("tool", tools, ref.id, ref.version)
    if problem:
        errors.append(f"{where}: {problem}")
        return ref
    if not found.is_read_only:
        errors.append(
            f"{where}: tool {found.id} is not read-only (mutating: false), and only a read-only tool "
            "may be a retrieval source"
        )
    schema = found.input_schema
    query = schema.get("properties", {}).get(RETRIEVAL_QUERY, {})
    others = sorted(set(schema.get("required", [])) - {RETRIEVAL_QUERY})
    if query.get("type") != "string" or others:
        errors.append(
            f"{where}: tool {found.id} must take {{{RETRIEVAL_QUERY!r}: <the user's message>}}: "
            f"its input needs a string field {RETRIEVAL_QUERY!r} and no other required field"
            + (f" (it requires {', '.join(others)})" if others else "")
        )
    return ToolRef(id=found.id, version=found.version)


def _resolve_flow(
    flow: FlowDefinition,
    tools: Mapping[Key, ToolDefinition],
    agents: Mapping[Key, AgentDefinition],
    pack_names: Iterable[str],
    errors: list[str],
) -> FlowDefinition:
    output_schemas: dict[str, tuple[str, dict[str, Any]]] = {}
    nodes: list[FlowNode] = []
    for index, node in enumerate(flow.nodes):
        where = f"{flow.label}: nodes[{index}] ({node.id!r})"
        _check_output_refs(node.input, output_schemas, errors, where=f"{where}: input")
        if node.kind == NodeKind.TOOL and pack_of(node.target) not in pack_names:
            # An MCP server's tool: its schema is the server's, known only at run time.
            nodes.append(replace(node, version=None))
            continue
        if node.kind == NodeKind.TOOL:
            target, problem = _resolve_version("tool", tools, node.target, node.version)
        else:
            target, problem = _resolve_version("agent", agents, node.target, node.version)
        if problem:
            errors.append(f"{where}: {node.kind.value}: {problem}")
            nodes.append(node)
            continue
        input_schema = target.input_schema
        output_schema = target.output_schema if node.kind == NodeKind.TOOL else AGENT_STEP_OUTPUT_SCHEMA
        _check_node_input(node, target.label, input_schema, errors, where=where)
        output_schemas[node.id] = (target.label, output_schema)
        nodes.append(replace(node, version=target.version))
    _check_output_refs(flow.output, output_schemas, errors, where=f"{flow.label}: output")
    return replace(flow, nodes=tuple(nodes))


def _check_node_input(
    node: FlowNode, target_label: str, schema: dict[str, Any], errors: list[str], *, where: str
) -> None:
    fields = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in node.input:
            errors.append(f"{where}: input: {target_label} requires field {name!r}")
    for name in node.input:
        if name not in fields:
            errors.append(
                f"{where}: input.{name}: {target_label} has no input field {name!r} "
                f"(its fields: {', '.join(fields) or 'none'})"
            )


def _check_output_refs(
    template: Any,
    output_schemas: Mapping[str, tuple[str, dict[str, Any]]],
    errors: list[str],
    *,
    where: str,
) -> None:
    for location, ref in iter_refs(template, where=""):
        if ref.node is None or not ref.path or ref.node not in output_schemas:
            continue
        target_label, schema = output_schemas[ref.node]
        fields = schema.get("properties", {})
        if ref.path[0] not in fields:
            errors.append(
                f"{where}{location}: node {ref.node!r} ({target_label}) has no output field "
                f"{ref.path[0]!r} (its fields: {', '.join(fields) or 'none'})"
            )
