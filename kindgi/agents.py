"""Agents: instructions, a model, the tools they may call and the gates in front of those tools."""

import json
import re
import string
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from kindgi.capabilities import missing_features, model_features, parse_capabilities
from kindgi.errors import DefinitionError
from kindgi.gates import GATE_OVERRIDE_TEXT, GateOverride
from kindgi.guardrails import BeforeToolGuardrail, as_guardrail
from kindgi.models import ScriptedModel
from kindgi.naming import check_definition_id, check_name, check_semver
from kindgi.tools import ToolDefinition

USER_MESSAGE = "userMessage"
# What a retrieval source is given: the user's message, as ``{"query": …}``.
RETRIEVAL_QUERY = "query"
_PARAMETER_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


@dataclass(frozen=True, kw_only=True)
class ToolRef:
    """An agent's reference to a tool; a missing version means the newest one loaded."""

    id: str
    version: str | None = None

    @classmethod
    def from_value(cls, value: Any, *, what: str) -> "ToolRef":
        if isinstance(value, ToolRef):
            return value
        if isinstance(value, ToolDefinition):
            return cls(id=value.id, version=value.version)
        if isinstance(value, str):
            tool_id, _, version = value.partition("@")
            return cls(id=tool_id, version=version or None)
        if isinstance(value, Mapping) and "id" in value and set(value) <= {"id", "version"}:
            return cls(id=value["id"], version=value.get("version"))
        raise DefinitionError(
            f"{what}: {value!r} is not a tool reference "
            "(use a tool, 'pack.tool', 'pack.tool@1.2.3' or {'id': …, 'version': …})"
        )

    def to_dict(self) -> dict[str, str | None]:
        return {"id": self.id, "version": self.version}


@dataclass(frozen=True, kw_only=True)
class AgentParameter:
    """A value the caller passes to an agent turn beside ``userMessage``."""

    name: str
    schema: Mapping[str, Any] = field(default_factory=lambda: {"type": "string"})
    required: bool = False
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "schema": dict(self.schema),
            "required": self.required,
            "description": self.description,
        }


@dataclass(frozen=True, kw_only=True)
class AgentDefinition:
    """An agent as its pack declares it. Make one with ``define_agent``."""

    id: str
    version: str
    name: str
    description: str
    instructions: str
    # A provider's model string ("openai:gpt-4.1-mini"), a scripted model, or None for the
    # site's KINDGI_DEFAULT_MODEL.
    model: str | ScriptedModel | None
    tools: tuple[ToolRef, ...]
    guardrails: tuple[BeforeToolGuardrail, ...] = ()
    parameters: tuple[AgentParameter, ...] = ()
    capabilities: tuple[Mapping[str, Any], ...] = ()
    # The features the capabilities need of the model (``kindgi.capabilities.FEATURES``).
    needed_features: frozenset[str] = frozenset()
    # Read-only tools that run with the user's message before the model's first step; what they
    # return reaches the model as outside data.
    retrieval: tuple[ToolRef, ...] = ()
    parallel_tool_calls: bool = True
    # MCP servers every tool of which the agent may call, those added later included.
    mcp_servers: tuple[str, ...] = ()
    # None: the agent has no `hitl.tools`, so no tool gates of its own.
    gate_overrides: Mapping[str, GateOverride] | None = None
    # Overrides that apply only when a predicate on the call's arguments holds, by tool id.
    override_conditions: Mapping[str, Callable[[Mapping[str, Any]], bool]] = field(default_factory=dict)

    @property
    def model_name(self) -> str:
        if self.model is None:
            return "default"
        return self.model.model_name if isinstance(self.model, ScriptedModel) else self.model

    def instructions_for(self, values: Mapping[str, Any]) -> str:
        """The instructions with each ``{parameter}`` replaced by the run's value of it (a
        parameter left out, or null, reads as its schema's default, or as nothing)."""
        if not self.parameters:
            return self.instructions
        defaults = {parameter.name: parameter.schema.get("default", "") for parameter in self.parameters}
        parts = []
        for literal, name, _, _ in string.Formatter().parse(self.instructions):
            parts.append(literal)
            if name is not None:
                value = values.get(name)
                value = defaults[name] if value is None else value
                parts.append(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        return "".join(parts)

    def lacks(self, model_name: str, features: Iterable[str]) -> str | None:
        """What the agent needs that a model with ``features`` lacks, as a message, or None."""
        return missing_features(self.needed_features, model_name, features)

    @property
    def gates_enabled(self) -> bool:
        """Whether ``conversation_policy.hitl.tools`` is present (even with no overrides)."""
        return self.gate_overrides is not None

    @property
    def label(self) -> str:
        return f"agent {self.id}@{self.version}"

    @property
    def guardrail_names(self) -> list[str]:
        return [guardrail.name for guardrail in self.guardrails]

    @property
    def conversation_policy(self) -> dict[str, Any]:
        if self.gate_overrides is None:
            return {}
        overrides = {tool_id: gate.value for tool_id, gate in self.gate_overrides.items()}
        return {"hitl": {"tools": {"overrides": overrides}}}

    @property
    def override_condition_names(self) -> dict[str, str]:
        return {
            tool_id: f"{when.__module__}.{getattr(when, '__qualname__', repr(when))}"
            for tool_id, when in self.override_conditions.items()
        }

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of an agent turn's input: ``userMessage`` plus the declared parameters."""
        properties: dict[str, Any] = {USER_MESSAGE: {"type": "string", "minLength": 1}}
        required = [USER_MESSAGE]
        for parameter in self.parameters:
            schema = dict(parameter.schema)
            if parameter.description:
                schema.setdefault("description", parameter.description)
            properties[parameter.name] = schema
            if parameter.required:
                required.append(parameter.name)
        return {
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }


def define_agent(
    *,
    id: str,
    version: str,
    name: str,
    instructions: str,
    description: str = "",
    tools: Iterable[Any] = (),
    guardrails: Iterable[BeforeToolGuardrail | Callable[..., Any]] = (),
    parameters: Iterable[AgentParameter] = (),
    capabilities: Iterable[Mapping[str, Any]] = (),
    retrieval: Iterable[Any] = (),
    model: str | ScriptedModel | None = None,
    parallel_tool_calls: bool = True,
    conversation_policy: Mapping[str, Any] | None = None,
    mcp_servers: Iterable[str] = (),
) -> AgentDefinition:
    """Declare an agent.

    ``tools`` may name an MCP server's tools by id (``"files.read-file"``), and ``mcp_servers``
    whole servers (``["files"]``: each tool it lists, now or later); both are found at run time
    among the servers the run's tenant may use.

    ``conversation_policy={"hitl": {"tools": {"overrides": {"acme-ops.post-update": "always_ask"}}}}``
    turns tool gates on; ``{"hitl": {"tools": {}}}`` turns them on with no overrides.

    ``instructions`` may use the agent's ``parameters`` by name (``"Answer in a {tone} tone."``;
    ``{{`` and ``}}`` for braces). ``capabilities=[{"needs": [{"feature": "tool-use"}]}]`` says
    what the model must be able to do. ``retrieval`` names read-only tools that take
    ``{"query": <the user's message>}`` and run before the model's first step.
    """
    what = f"agent {id!r}"
    check_definition_id(id, what=what)
    check_semver(version, what=what)
    what = f"agent {id}@{version}"
    for field_name, text in (("name", name), ("instructions", instructions)):
        if not isinstance(text, str) or not text.strip():
            raise DefinitionError(f"{what}: {field_name} must be a non-empty string")
    if not isinstance(description, str):
        raise DefinitionError(f"{what}: description must be a string")
    if isinstance(model, str):
        model = model.strip()
    if model is not None and not isinstance(model, ScriptedModel) and not (isinstance(model, str) and model):
        raise DefinitionError(
            f"{what}: model must be a scripted model or a model string such as 'openai:gpt-4.1-mini'"
        )
    if not isinstance(parallel_tool_calls, bool):
        raise DefinitionError(f"{what}: parallel_tool_calls must be True or False")

    tool_refs = tuple(
        ToolRef.from_value(value, what=f"{what}: tools[{index}]") for index, value in enumerate(tools)
    )
    for index, ref in enumerate(tool_refs):
        check_definition_id(ref.id, what=f"{what}: tools[{index}]")
        if ref.version is not None:
            check_semver(ref.version, what=f"{what}: tools[{index}]")
    seen: set[str] = set()
    for index, ref in enumerate(tool_refs):
        if ref.id in seen:
            raise DefinitionError(f"{what}: tools[{index}]: tool {ref.id!r} is listed twice")
        seen.add(ref.id)

    if isinstance(mcp_servers, str):
        raise DefinitionError(f"{what}: mcp_servers must be a list of server names, not a string")
    server_names = tuple(mcp_servers)
    for index, server in enumerate(server_names):
        check_name(server, what=f"{what}: mcp_servers[{index}]")
        if server in server_names[:index]:
            raise DefinitionError(f"{what}: mcp_servers[{index}]: server {server!r} is listed twice")

    guardrail_list = tuple(
        as_guardrail(value, what=f"{what}: guardrails[{index}]") for index, value in enumerate(guardrails)
    )
    for index, guardrail in enumerate(guardrail_list):
        unknown = sorted((guardrail.tools or frozenset()) - seen)
        if unknown:
            raise DefinitionError(
                f"{what}: guardrails[{index}]: guards {', '.join(map(repr, unknown))}, "
                "which the agent does not have"
            )

    parameter_list = tuple(parameters)
    names: set[str] = set()
    for index, parameter in enumerate(parameter_list):
        where = f"{what}: parameters[{index}]"
        if not isinstance(parameter, AgentParameter):
            raise DefinitionError(f"{where}: must be an AgentParameter, not {parameter!r}")
        if not _PARAMETER_NAME.match(parameter.name) or parameter.name == USER_MESSAGE:
            raise DefinitionError(
                f"{where}: name {parameter.name!r} must be an identifier other than {USER_MESSAGE!r}"
            )
        if parameter.name in names:
            raise DefinitionError(f"{where}: parameter {parameter.name!r} is declared twice")
        names.add(parameter.name)

    _check_instruction_fields(instructions, names, what=what)

    needed_features, capability_list = parse_capabilities(capabilities, what=what)
    if model is not None:
        model_name = model.model_name if isinstance(model, ScriptedModel) else model
        has = model.features if isinstance(model, ScriptedModel) else model_features(model)
        lacking = missing_features(needed_features, model_name, has)
        if lacking:
            raise DefinitionError(f"{what}: {lacking}")

    if isinstance(retrieval, (str, Mapping)):
        raise DefinitionError(f"{what}: retrieval must be a list of tools")
    retrieval_refs = tuple(
        ToolRef.from_value(value, what=f"{what}: retrieval[{index}]") for index, value in enumerate(retrieval)
    )
    for index, ref in enumerate(retrieval_refs):
        check_definition_id(ref.id, what=f"{what}: retrieval[{index}]")
        if ref.id in {other.id for other in retrieval_refs[:index]}:
            raise DefinitionError(f"{what}: retrieval[{index}]: tool {ref.id!r} is listed twice")

    gate_overrides, override_conditions = _parse_conversation_policy(
        conversation_policy, tool_refs, what=what
    )
    return AgentDefinition(
        id=id,
        version=version,
        name=name.strip(),
        description=description.strip(),
        instructions=instructions.strip(),
        model=model,
        tools=tool_refs,
        guardrails=guardrail_list,
        parameters=parameter_list,
        capabilities=capability_list,
        needed_features=needed_features,
        retrieval=retrieval_refs,
        parallel_tool_calls=parallel_tool_calls,
        mcp_servers=server_names,
        gate_overrides=gate_overrides,
        override_conditions=override_conditions,
    )


def _check_instruction_fields(instructions: str, parameters: set[str], *, what: str) -> None:
    """Every ``{name}`` in the instructions names a parameter, plainly: no attribute, index,
    conversion or format (a run's values are text put in place, never evaluated)."""
    where = f"{what}: instructions"
    known = ", ".join(sorted(parameters)) or "none"
    try:
        fields = [
            (name, conversion, spec) for _, name, spec, conversion in string.Formatter().parse(instructions)
        ]
    except ValueError as error:
        raise DefinitionError(f"{where}: {error} (write {{{{ and }}}} for a brace)") from None
    for name, conversion, spec in fields:
        if name is None:
            continue
        if name not in parameters:
            raise DefinitionError(
                f"{where}: {{{name}}} is not one of the agent's parameters (its parameters: {known}; "
                "write {{ and }} for a brace)"
            )
        if conversion or spec:
            raise DefinitionError(f"{where}: {{{name}}} must be written plainly, with no ! or :")


def _parse_conversation_policy(
    policy: Mapping[str, Any] | None, tool_refs: tuple[ToolRef, ...], *, what: str
) -> tuple[dict[str, GateOverride] | None, dict[str, Callable[[Mapping[str, Any]], bool]]]:
    """Overrides are ``"always_ask"``/``"never_ask"``, or ``{"gate": …, "when": predicate}`` to
    apply only when ``predicate(arguments)`` is true."""
    if policy is None:
        return None, {}
    where = f"{what}: conversation_policy"
    hitl = _mapping_with_keys(policy, {"hitl"}, where=where).get("hitl")
    if hitl is None:
        return None, {}
    where += ".hitl"
    hitl_tools = _mapping_with_keys(hitl, {"tools"}, where=where).get("tools")
    if hitl_tools is None:
        return None, {}
    where += ".tools"
    raw_overrides = _mapping_with_keys(hitl_tools, {"overrides"}, where=where).get("overrides", {})
    where += ".overrides"
    raw_overrides = _mapping_with_keys(raw_overrides, None, where=where)
    own_tools = {ref.id for ref in tool_refs}
    overrides: dict[str, GateOverride] = {}
    conditions: dict[str, Callable[[Mapping[str, Any]], bool]] = {}
    for tool_id, value in raw_overrides.items():
        place = f"{where}[{tool_id!r}]"
        if tool_id not in own_tools:
            raise DefinitionError(
                f"{place}: the agent has no tool {tool_id!r} "
                f"(its tools: {', '.join(sorted(own_tools)) or 'none'})"
            )
        if isinstance(value, Mapping):
            value = _mapping_with_keys(value, {"gate", "when"}, where=place)
            when = value.get("when")
            if not callable(when):
                raise DefinitionError(f"{place}.when: must be a predicate on the call's arguments")
            conditions[tool_id] = when
            value = value.get("gate")
        try:
            overrides[tool_id] = GateOverride(value)
        except ValueError:
            raise DefinitionError(f"{place}: {value!r} is not one of: {GATE_OVERRIDE_TEXT}") from None
    return overrides, conditions


def _mapping_with_keys(value: Any, allowed: set[str] | None, *, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise DefinitionError(f"{where}: must be a mapping, not {value!r}")
    if allowed is not None:
        unknown = sorted(set(value) - allowed)
        if unknown:
            raise DefinitionError(
                f"{where}: unknown key(s) {', '.join(map(repr, unknown))} "
                f"(allowed: {', '.join(sorted(allowed))})"
            )
    return value
