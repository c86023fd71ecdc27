"""Flows: steps over tools and agents, wired to the flow input and earlier outputs as data.

A node's input and the flow's output are *templates*: JSON values in which
``{"$ref": "#/input/<path>"}`` or ``{"$ref": "#/nodes/<node id>/output/<path>"}``
stands for a value known only when the flow runs. ``from_input`` and
``from_node`` write those references, so a flow holds no code and can be
stored as JSON, shown in the admin and checked before it runs.
"""

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict

from kindgi.agents import AgentDefinition
from kindgi.errors import DefinitionError
from kindgi.naming import check_definition_id, check_name, check_semver, is_name
from kindgi.tools import ToolDefinition

REF_KEY = "$ref"

# What an agent step returns to its flow: the agent's final reply.
AGENT_STEP_OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"reply": {"type": "string"}},
    "required": ["reply"],
}


def _escape(segment: str | int) -> str:
    return str(segment).replace("~", "~0").replace("/", "~1")


def _unescape(segment: str) -> str:
    return segment.replace("~1", "/").replace("~0", "~")


@dataclass(frozen=True)
class Ref:
    """A reference to the flow input or an earlier node's output, by JSON pointer."""

    pointer: str

    def to_json(self) -> dict[str, str]:
        return {REF_KEY: self.pointer}


def from_input(*path: str | int) -> Ref:
    """The flow input, or a part of it: ``from_input("orderId")``."""
    return Ref("#/input" + "".join(f"/{_escape(p)}" for p in path))


def from_node(node_id: str, *path: str | int) -> Ref:
    """An earlier node's output, or a part of it: ``from_node("lookup", "status")``."""
    return Ref(f"#/nodes/{_escape(node_id)}/output" + "".join(f"/{_escape(p)}" for p in path))


@dataclass(frozen=True, kw_only=True)
class ParsedRef:
    """A reference taken apart: ``node`` is None for the flow input."""

    node: str | None
    path: tuple[str, ...]


def parse_ref(pointer: object) -> ParsedRef:
    """Take a reference apart, or raise ``DefinitionError`` saying what a reference looks like."""
    if isinstance(pointer, str) and pointer.startswith("#/"):
        segments = [_unescape(s) for s in pointer[2:].split("/")]
        if segments[0] == "input":
            return ParsedRef(node=None, path=tuple(segments[1:]))
        if len(segments) >= 3 and segments[0] == "nodes" and segments[2] == "output":
            return ParsedRef(node=segments[1], path=tuple(segments[3:]))
    raise DefinitionError(f"reference {pointer!r} must be '#/input/…' or '#/nodes/<node id>/output/…'")


def to_template(value: Any, *, where: str) -> Any:
    """Turn a Python template (with ``Ref`` values) into plain JSON, checking it on the way."""
    if isinstance(value, Ref):
        return value.to_json()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [to_template(item, where=f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, Mapping):
        if REF_KEY in value:
            if set(value) != {REF_KEY}:
                raise DefinitionError(f"{where}: a reference must hold only {REF_KEY!r}")
            try:
                parse_ref(value[REF_KEY])
            except DefinitionError as error:
                raise DefinitionError(f"{where}: {error}") from None
            return {REF_KEY: value[REF_KEY]}
        result = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise DefinitionError(f"{where}: key {key!r} must be a string")
            result[key] = to_template(item, where=f"{where}.{key}")
        return result
    raise DefinitionError(f"{where}: {value!r} is neither JSON nor a reference")


def iter_refs(template: Any, *, where: str) -> Iterator[tuple[str, ParsedRef]]:
    """Every reference in a JSON template, with where it sits."""
    if isinstance(template, list):
        for index, item in enumerate(template):
            yield from iter_refs(item, where=f"{where}[{index}]")
    elif isinstance(template, dict):
        if set(template) == {REF_KEY}:
            yield where, parse_ref(template[REF_KEY])
        else:
            for key, item in template.items():
                yield from iter_refs(item, where=f"{where}.{key}")


class NodeKind(StrEnum):
    TOOL = "tool"
    AGENT = "agent"


@dataclass(frozen=True, kw_only=True)
class FlowNode:
    """One step of a flow: call a tool, or run an agent turn (a child run)."""

    id: str
    kind: NodeKind
    target: str
    version: str | None
    input: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind.value,
            self.kind.value: self.target,
            "version": self.version,
            "input": self.input,
        }


def _step(kind: NodeKind, node_id: str, target: Any, version: str | None, node_input: Any) -> FlowNode:
    what = f"{kind.value} step {node_id!r}"
    check_name(node_id, what=what)
    if isinstance(target, ToolDefinition | AgentDefinition):
        version = version or target.version
        target = target.id
    check_definition_id(target, what=f"{what}: {kind.value}")
    if version is not None:
        check_semver(version, what=f"{what}: {kind.value}")
    if not isinstance(node_input, Mapping):
        raise DefinitionError(f"{what}: input must be a mapping of field → value or reference")
    return FlowNode(
        id=node_id,
        kind=kind,
        target=target,
        version=version,
        input=to_template(node_input, where="input"),
    )


def tool_step(
    id: str, tool: ToolDefinition | str, *, input: Mapping[str, Any], version: str | None = None
) -> FlowNode:
    """A step that calls ``tool`` with ``input`` (literals and references)."""
    return _step(NodeKind.TOOL, id, tool, version, input)


def agent_step(
    id: str, agent: AgentDefinition | str, *, input: Mapping[str, Any], version: str | None = None
) -> FlowNode:
    """A step that runs one turn of ``agent``; its output is ``{"reply": …}``."""
    return _step(NodeKind.AGENT, id, agent, version, input)


@dataclass(frozen=True, kw_only=True)
class FlowDefinition:
    """A flow as its pack declares it. Make one with ``define_flow``."""

    id: str
    version: str
    description: str
    input_model: type[BaseModel]
    nodes: tuple[FlowNode, ...]
    output: dict[str, Any]

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.input_model.model_json_schema()

    @property
    def label(self) -> str:
        return f"flow {self.id}@{self.version}"

    def node(self, node_id: str) -> FlowNode | None:
        return next((node for node in self.nodes if node.id == node_id), None)


def define_flow(
    *,
    id: str,
    version: str,
    input: type[BaseModel],
    nodes: Iterable[FlowNode],
    output: Mapping[str, Any],
    description: str = "",
) -> FlowDefinition:
    """Declare a flow: nodes run in order; ``output`` maps references to the flow's result."""
    what = f"flow {id!r}"
    check_definition_id(id, what=what)
    check_semver(version, what=what)
    what = f"flow {id}@{version}"
    if not (isinstance(input, type) and issubclass(input, BaseModel)):
        raise DefinitionError(f"{what}: input must be a pydantic model")
    node_list = tuple(nodes)
    if not node_list:
        raise DefinitionError(f"{what}: nodes: a flow needs at least one node")
    if not isinstance(output, Mapping):
        raise DefinitionError(f"{what}: output must be a mapping of field → reference or value")
    try:
        output_template = to_template(output, where="output")
    except DefinitionError as error:
        raise DefinitionError(f"{what}: {error}") from None
    flow = FlowDefinition(
        id=id,
        version=version,
        description=description.strip(),
        input_model=_refusing_unknown_fields(input),
        nodes=node_list,
        output=output_template,
    )
    _check_wiring(flow)
    return flow


def _refusing_unknown_fields(model: type[BaseModel]) -> type[BaseModel]:
    """The flow's input model, refusing fields it does not declare: a misspelled field must not
    be dropped and the flow run without it. A model that sets ``extra`` itself keeps its choice."""
    if model.model_config.get("extra") is not None:
        return model
    return type(
        model.__name__,
        (model,),
        {
            "__module__": model.__module__,
            "__qualname__": model.__qualname__,
            "__doc__": model.__doc__,
            "model_config": ConfigDict(extra="forbid"),
        },
    )


def _check_wiring(flow: FlowDefinition) -> None:
    """Node ids are unique and every reference points at the input or an earlier node."""
    input_fields = set(flow.input_schema.get("properties", {}))
    earlier: set[str] = set()
    for index, node in enumerate(flow.nodes):
        where = f"{flow.label}: nodes[{index}]"
        if not isinstance(node, FlowNode):
            raise DefinitionError(f"{where}: {node!r} is not a step (use tool_step or agent_step)")
        where += f" ({node.id!r})"
        if node.id in earlier:
            raise DefinitionError(f"{where}: node id {node.id!r} is used twice")
        _check_refs(node.input, earlier, input_fields, where=f"{where}: input")
        earlier.add(node.id)
    _check_refs(flow.output, earlier, input_fields, where=f"{flow.label}: output")


def _check_refs(template: Any, earlier: set[str], input_fields: set[str], *, where: str) -> None:
    for location, ref in iter_refs(template, where=""):
        place = f"{where}{location}"
        if ref.node is None:
            if ref.path and input_fields and ref.path[0] not in input_fields:
                raise DefinitionError(
                    f"{place}: the flow input has no field {ref.path[0]!r} "
                    f"(its fields: {', '.join(sorted(input_fields))})"
                )
        elif ref.node not in earlier:
            known = ", ".join(sorted(earlier)) or "none yet"
            reason = "is not an earlier node" if is_name(ref.node) else "is not a node"
            raise DefinitionError(
                f"{place}: references unknown node {ref.node!r}: it {reason} "
                f"(nodes before this point: {known})"
            )
