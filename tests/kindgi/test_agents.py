import pytest

from kindgi import AgentParameter, DefinitionError, GateOverride, ToolRef, define_agent

from .definitions import read_stock, write_stock


def agent(**overrides):
    fields = {
        "id": "shop.clerk",
        "version": "1.0.0",
        "name": "Clerk",
        "instructions": "Keep the stock right.",
        "tools": [read_stock, write_stock],
    }
    return define_agent(**(fields | overrides))


def test_an_agent_keeps_what_it_declares():
    clerk = agent(
        description="Minds the shop.",
        capabilities=[{"needs": [{"feature": "tool-use"}]}],
        parameters=[AgentParameter(name="tone", required=True, description="How to talk.")],
        parallel_tool_calls=False,
        model="openai:gpt-4.1-mini",
    )
    assert clerk.tools == (
        ToolRef(id="shop.read", version="1.0.0"),
        ToolRef(id="shop.write", version="1.0.0"),
    )
    assert clerk.model == "openai:gpt-4.1-mini"
    assert clerk.parallel_tool_calls is False
    assert clerk.gates_enabled is False
    assert clerk.conversation_policy == {}
    assert clerk.input_schema == {
        "type": "object",
        "properties": {
            "userMessage": {"type": "string", "minLength": 1},
            "tone": {"type": "string", "description": "How to talk."},
        },
        "required": ["userMessage", "tone"],
        "additionalProperties": False,
    }


def test_defaults_match_the_design():
    clerk = agent()
    assert clerk.parallel_tool_calls is True
    assert clerk.model is None
    assert clerk.model_name == "default"
    assert clerk.gate_overrides is None


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("shop.read", ToolRef(id="shop.read", version=None)),
        ("shop.read@1.0.0", ToolRef(id="shop.read", version="1.0.0")),
        ({"id": "shop.read", "version": "1.0.0"}, ToolRef(id="shop.read", version="1.0.0")),
        ({"id": "shop.read"}, ToolRef(id="shop.read", version=None)),
    ],
)
def test_tool_references_take_several_forms(value, expected):
    assert agent(tools=[value]).tools == (expected,)


def test_a_bad_tool_reference_names_the_field():
    with pytest.raises(
        DefinitionError, match=r"agent shop\.clerk@1\.0\.0: tools\[1\]: 42 is not a tool reference"
    ):
        agent(tools=[read_stock, 42])
    with pytest.raises(DefinitionError, match=r"tools\[0\]: id 'Shop\.Read' must be"):
        agent(tools=["Shop.Read"])
    with pytest.raises(DefinitionError, match=r"tools\[0\]: version 'one' is not a semantic version"):
        agent(tools=["shop.read@one"])
    with pytest.raises(DefinitionError, match=r"tools\[1\]: tool 'shop.read' is listed twice"):
        agent(tools=[read_stock, "shop.read"])


def test_an_empty_hitl_tools_turns_gates_on_without_overrides():
    clerk = agent(conversation_policy={"hitl": {"tools": {}}})
    assert clerk.gates_enabled is True
    assert clerk.gate_overrides == {}
    assert clerk.conversation_policy == {"hitl": {"tools": {"overrides": {}}}}


def test_hitl_without_tools_leaves_gates_off():
    assert agent(conversation_policy={"hitl": {}}).gates_enabled is False


def test_overrides_are_parsed():
    clerk = agent(
        conversation_policy={
            "hitl": {"tools": {"overrides": {"shop.write": "always_ask", "shop.read": "never_ask"}}}
        }
    )
    assert clerk.gate_overrides == {
        "shop.write": GateOverride.ALWAYS_ASK,
        "shop.read": GateOverride.NEVER_ASK,
    }


def test_an_override_naming_a_tool_the_agent_lacks_is_refused():
    with pytest.raises(DefinitionError) as error:
        agent(conversation_policy={"hitl": {"tools": {"overrides": {"shop.delete": "always_ask"}}}})
    assert str(error.value) == (
        "agent shop.clerk@1.0.0: conversation_policy.hitl.tools.overrides['shop.delete']: "
        "the agent has no tool 'shop.delete' (its tools: shop.read, shop.write)"
    )


@pytest.mark.parametrize("value", ["ask_once", "sometimes", "ALWAYS_ASK", True])
def test_an_override_value_must_be_always_ask_or_never_ask(value):
    with pytest.raises(DefinitionError) as error:
        agent(conversation_policy={"hitl": {"tools": {"overrides": {"shop.write": value}}}})
    assert str(error.value) == (
        "agent shop.clerk@1.0.0: conversation_policy.hitl.tools.overrides['shop.write']: "
        f"{value!r} is not one of: always_ask, never_ask"
    )


def test_unknown_policy_keys_are_refused_by_name():
    with pytest.raises(DefinitionError, match=r"conversation_policy\.hitl: unknown key\(s\) 'tool'"):
        agent(conversation_policy={"hitl": {"tool": {}}})
    with pytest.raises(DefinitionError, match=r"conversation_policy\.hitl\.tools: must be a mapping"):
        agent(conversation_policy={"hitl": {"tools": ["shop.write"]}})


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("id", "clerk", r"must be '<pack>\.<name>'"),
        ("version", "1", "is not a semantic version"),
        ("name", " ", "name must be a non-empty string"),
        ("instructions", "", "instructions must be a non-empty string"),
        ("model", "", "model must be a scripted model or a model string"),
        ("parallel_tool_calls", "no", "parallel_tool_calls must be True or False"),
        ("guardrails", ["not callable"], r"guardrails\[0\]: 'not callable' is not callable"),
        ("parameters", [{"name": "x"}], r"parameters\[0\]: must be an AgentParameter"),
        ("parameters", [AgentParameter(name="userMessage")], "must be an identifier other than"),
        ("parameters", [AgentParameter(name="a"), AgentParameter(name="a")], "declared twice"),
        ("capabilities", ["tool-use"], r"capabilities\[0\]: must be a mapping"),
        ("capabilities", [{"needs": [{"feature": "telepathy"}]}], r"'telepathy' is not a known feature"),
        ("capabilities", [{"wants": []}], r"capabilities\[0\]: unknown key\(s\) 'wants'"),
        ("capabilities", [{"needs": ["vision"]}], r"capabilities\[0\]\.needs\[0\]: must be \{'feature'"),
        ("instructions", "Be {tone}.", r"instructions: \{tone\} is not one of the agent's parameters"),
        ("instructions", 'Reply as {"a": 1}', r"instructions: .* is not one of the agent's parameters"),
        ("instructions", "Unclosed { here", r"instructions: .*write \{\{ and \}\} for a brace"),
        ("retrieval", "shop.read", "retrieval must be a list of tools"),
    ],
)
def test_field_errors_name_the_field(field, value, message):
    with pytest.raises(DefinitionError, match=message):
        agent(**{field: value})


def test_guardrails_are_named_by_their_qualified_name():
    def no_refunds(call):
        return True

    assert agent(guardrails=[no_refunds]).guardrail_names == [
        f"{__name__}.test_guardrails_are_named_by_their_qualified_name.<locals>.no_refunds"
    ]


def test_instructions_use_parameters_by_name_and_nothing_else():
    toned = agent(
        instructions="Talk in a {tone} way about {{braces}}.",
        parameters=[AgentParameter(name="tone", schema={"type": "string", "default": "plain"})],
    )
    assert toned.instructions_for({"tone": "dry"}) == "Talk in a dry way about {braces}."
    assert toned.instructions_for({}) == "Talk in a plain way about {braces}."
    assert toned.instructions_for({"tone": ["a", 1]}) == 'Talk in a ["a", 1] way about {braces}.'
    for written in ("{tone!r}", "{tone:>10}", "{tone.upper}", "{tone[0]}"):
        with pytest.raises(DefinitionError, match="instructions: "):
            agent(instructions=f"Be {written}.", parameters=[AgentParameter(name="tone")])


def test_a_model_that_lacks_a_needed_feature_is_a_load_error_naming_it():
    from kindgi import scripted

    @scripted(features=["tool-use"])
    def blind(request):
        raise AssertionError("never asked")

    seeing = [{"needs": [{"feature": "tool-use"}, {"feature": "vision"}]}]
    with pytest.raises(DefinitionError, match=r"needs the feature\(s\) 'vision', which its model scripted:"):
        agent(model=blind, capabilities=seeing)
    with pytest.raises(DefinitionError, match=r"'vision', which its model openai-compatible:llama3@"):
        agent(model="openai-compatible:llama3@http://127.0.0.1:11434/v1", capabilities=seeing)
    assert agent(model="openai:gpt-4.1-mini", capabilities=seeing).needed_features == {"tool-use", "vision"}
    # on the site's default model, known only when a run starts, it loads
    assert agent(capabilities=seeing).needed_features == {"tool-use", "vision"}
    with pytest.raises(DefinitionError, match="'sight' is not a known feature"):
        scripted(features=["sight"])(lambda request: None)
