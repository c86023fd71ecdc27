import json

import pytest
from pydantic import BaseModel

from kindgi import (
    DefinitionError,
    agent_step,
    define_agent,
    define_flow,
    from_input,
    from_node,
    tool_step,
)
from kindgi.flows import ParsedRef, parse_ref

from .definitions import read_stock, write_stock


class RestockInput(BaseModel):
    item: str
    amount: int = 1


clerk = define_agent(id="shop.clerk", version="1.0.0", name="Clerk", instructions="Help.")


def restock(**overrides):
    fields = {
        "id": "shop.restock",
        "version": "1.0.0",
        "input": RestockInput,
        "nodes": [
            tool_step("check", read_stock, input={"text": from_input("item")}),
            tool_step("write", write_stock, input={"text": from_node("check", "count")}),
            agent_step("tell", clerk, input={"userMessage": "Restocked."}),
        ],
        "output": {"count": from_node("check", "count"), "reply": from_node("tell", "reply")},
    }
    return define_flow(**(fields | overrides))


def test_a_flow_is_plain_data():
    flow = restock()
    stored = json.loads(json.dumps([node.to_dict() for node in flow.nodes]))
    assert stored == [
        {
            "id": "check",
            "kind": "tool",
            "tool": "shop.read",
            "version": "1.0.0",
            "input": {"text": {"$ref": "#/input/item"}},
        },
        {
            "id": "write",
            "kind": "tool",
            "tool": "shop.write",
            "version": "1.0.0",
            "input": {"text": {"$ref": "#/nodes/check/output/count"}},
        },
        {
            "id": "tell",
            "kind": "agent",
            "agent": "shop.clerk",
            "version": "1.0.0",
            "input": {"userMessage": "Restocked."},
        },
    ]
    assert flow.output == {
        "count": {"$ref": "#/nodes/check/output/count"},
        "reply": {"$ref": "#/nodes/tell/output/reply"},
    }
    assert flow.input_schema["properties"].keys() == {"item", "amount"}


def test_references_escape_json_pointer_characters():
    ref = from_node("check", "a/b", "c~d", 0)
    assert ref.pointer == "#/nodes/check/output/a~1b/c~0d/0"
    assert parse_ref(ref.pointer) == ParsedRef(node="check", path=("a/b", "c~d", "0"))
    assert parse_ref("#/input") == ParsedRef(node=None, path=())


def test_templates_nest_literals_and_references():
    flow = restock(
        nodes=[tool_step("check", read_stock, input={"text": from_input("item")})],
        output={"summary": {"items": [from_input("item"), "fixed", 3, None, True]}},
    )
    assert flow.output == {"summary": {"items": [{"$ref": "#/input/item"}, "fixed", 3, None, True]}}


def test_a_node_referring_to_an_unknown_node_is_refused():
    with pytest.raises(DefinitionError) as error:
        restock(nodes=[tool_step("check", read_stock, input={"text": from_node("lookup", "count")})])
    assert str(error.value) == (
        "flow shop.restock@1.0.0: nodes[0] ('check'): input.text: references unknown node "
        "'lookup': it is not an earlier node (nodes before this point: none yet)"
    )


def test_a_node_referring_to_a_later_node_is_refused():
    with pytest.raises(
        DefinitionError,
        match=r"nodes\[0\] \('check'\): input\.text: references unknown node 'write'",
    ):
        restock(
            nodes=[
                tool_step("check", read_stock, input={"text": from_node("write", "count")}),
                tool_step("write", write_stock, input={"text": "x"}),
            ]
        )


def test_the_output_referring_to_an_unknown_node_is_refused():
    with pytest.raises(
        DefinitionError,
        match=r"output\.reply: references unknown node 'answer'.*check, tell, write",
    ):
        restock(output={"reply": from_node("answer", "reply")})


def test_a_reference_to_a_missing_input_field_is_refused():
    with pytest.raises(
        DefinitionError,
        match=r"input\.text: the flow input has no field 'name' \(its fields: amount, item\)",
    ):
        restock(nodes=[tool_step("check", read_stock, input={"text": from_input("name")})])


def test_node_ids_are_unique_names():
    with pytest.raises(DefinitionError, match=r"nodes\[1\] \('check'\): node id 'check' is used twice"):
        restock(
            nodes=[
                tool_step("check", read_stock, input={"text": "a"}),
                tool_step("check", read_stock, input={"text": "b"}),
            ]
        )
    with pytest.raises(DefinitionError, match="tool step 'Check': 'Check' is not a valid name"):
        tool_step("Check", read_stock, input={})


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: tool_step("a", "read", input={}), r"tool step 'a': tool: id 'read' must be"),
        (
            lambda: agent_step("a", "shop.clerk", version="x", input={}),
            "agent step 'a': agent: version 'x'",
        ),
        (lambda: tool_step("a", read_stock, input=["text"]), "input must be a mapping"),
        (
            lambda: tool_step("a", read_stock, input={"text": object()}),
            "input.text: .* is neither JSON nor a reference",
        ),
        (
            lambda: tool_step("a", read_stock, input={"text": {"$ref": "#/elsewhere"}}),
            "reference '#/elsewhere' must be",
        ),
        (
            lambda: tool_step("a", read_stock, input={"text": {"$ref": "#/input", "x": 1}}),
            "must hold only '\\$ref'",
        ),
    ],
)
def test_step_errors_name_the_step_and_field(make, message):
    with pytest.raises(DefinitionError, match=message):
        make()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("id", "restock", r"must be '<pack>\.<name>'"),
        ("version", "1.0", "is not a semantic version"),
        ("input", dict, "input must be a pydantic model"),
        ("nodes", [], "a flow needs at least one node"),
        ("nodes", ["check"], r"nodes\[0\]: 'check' is not a step"),
        ("output", [from_input("item")], "output must be a mapping"),
    ],
)
def test_flow_field_errors(field, value, message):
    with pytest.raises(DefinitionError, match=message):
        restock(**{field: value})
