import pytest
from pydantic import BaseModel

from kindgi import (
    DefinitionError,
    DefinitionErrors,
    ToolRef,
    agent_step,
    build_registry,
    define_agent,
    define_flow,
    define_pack,
    from_input,
    from_node,
    load_registry,
    tool,
    tool_step,
)
from kindgi.packs import import_pack

from .definitions import Count, Text, read_stock, write_stock


@tool(id="shop.read", version="1.2.0", mutating=False)
def read_stock_newer(query: Text) -> Count:
    """Reads the stock, faster."""
    return Count(count=0)


class FlowInput(BaseModel):
    item: str


def clerk(**overrides):
    fields = {"id": "shop.clerk", "version": "1.0.0", "name": "Clerk", "instructions": "Help."}
    return define_agent(**(fields | overrides))


def errors_of(*packs) -> list[str]:
    with pytest.raises(DefinitionErrors) as raised:
        build_registry(packs)
    return raised.value.errors


def test_a_consistent_pack_builds():
    agent = clerk(tools=["shop.read@1.0.0", "shop.write"])
    flow = define_flow(
        id="shop.restock",
        version="1.0.0",
        input=FlowInput,
        nodes=[tool_step("check", "shop.read", input={"text": from_input("item")})],
        output={"count": from_node("check", "count")},
    )
    registry = build_registry(
        [
            define_pack(
                name="shop",
                tools=[read_stock, read_stock_newer, write_stock],
                agents=[agent],
                flows=[flow],
            )
        ]
    )
    assert registry.tool("shop.read").version == "1.2.0"
    assert registry.tool("shop.read", "1.0.0") is read_stock
    assert registry.tool("shop.nothing") is None
    # references without a version are pinned to the newest version loaded
    assert registry.agent("shop.clerk").tools == (
        ToolRef(id="shop.read", version="1.0.0"),
        ToolRef(id="shop.write", version="1.0.0"),
    )
    assert registry.flow("shop.restock").nodes[0].version == "1.2.0"


def test_a_duplicate_id_and_version_is_refused():
    errors = errors_of(define_pack(name="shop", tools=[read_stock, read_stock]))
    assert errors == ["tool shop.read@1.0.0: defined twice (id and version must be unique)"]


def test_a_duplicate_across_packs_with_the_same_name_is_refused():
    errors = errors_of(
        define_pack(name="shop", tools=[read_stock]), define_pack(name="shop", tools=[read_stock])
    )
    assert errors[0].startswith("pack 'shop' is defined twice")
    assert "tool shop.read@1.0.0: defined twice (id and version must be unique)" in errors


def test_a_definition_must_live_in_its_own_pack():
    errors = errors_of(define_pack(name="store", tools=[read_stock]))
    assert errors == [
        "tool shop.read@1.0.0: id must start with its pack's name, 'store.' (it is listed in pack 'store')"
    ]


def test_an_agent_referencing_an_unknown_tool_or_version_is_refused():
    errors = errors_of(
        define_pack(
            name="shop",
            tools=[read_stock],
            agents=[clerk(tools=["shop.read@2.0.0", "shop.delete"])],
        )
    )
    assert errors == [
        "agent shop.clerk@1.0.0: tools[0]: references tool 'shop.read' version 2.0.0, "
        "which is not loaded (loaded versions: 1.0.0)",
        "agent shop.clerk@1.0.0: tools[1]: references unknown tool 'shop.delete'",
    ]


def test_a_retrieval_source_is_a_loaded_read_only_tool_that_takes_a_query():
    class Lookup(BaseModel):
        query: str
        limit: int

    @tool(id="shop.lookup", version="1.0.0", mutating=False)
    def lookup(query: Lookup) -> Count:
        """Looks things up."""
        return Count(count=0)

    errors = errors_of(
        define_pack(
            name="shop",
            tools=[read_stock, write_stock, lookup],
            agents=[
                clerk(retrieval=[write_stock]),
                clerk(version="1.0.1", retrieval=["shop.missing"]),
                clerk(version="1.0.2", retrieval=[lookup, read_stock]),
            ],
        )
    )
    assert errors == [
        "agent shop.clerk@1.0.0: retrieval[0]: tool shop.write is not read-only (mutating: false), "
        "and only a read-only tool may be a retrieval source",
        "agent shop.clerk@1.0.0: retrieval[0]: tool shop.write must take {'query': <the user's message>}: "
        "its input needs a string field 'query' and no other required field (it requires text)",
        "agent shop.clerk@1.0.1: retrieval[0]: references unknown tool 'shop.missing'",
        "agent shop.clerk@1.0.2: retrieval[0]: tool shop.lookup must take {'query': <the user's message>}: "
        "its input needs a string field 'query' and no other required field (it requires limit)",
        "agent shop.clerk@1.0.2: retrieval[1]: tool shop.read must take {'query': <the user's message>}: "
        "its input needs a string field 'query' and no other required field (it requires text)",
    ]


def test_a_flow_node_referencing_an_unknown_tool_or_agent_is_refused():
    flow = define_flow(
        id="shop.restock",
        version="1.0.0",
        input=FlowInput,
        nodes=[
            tool_step("check", "shop.count", input={"text": from_input("item")}),
            agent_step("tell", "shop.teller", input={"userMessage": "hi"}),
        ],
        output={},
    )
    errors = errors_of(define_pack(name="shop", tools=[read_stock], flows=[flow]))
    assert errors == [
        "flow shop.restock@1.0.0: nodes[0] ('check'): tool: references unknown tool 'shop.count'",
        "flow shop.restock@1.0.0: nodes[1] ('tell'): agent: references unknown agent 'shop.teller'",
    ]


def test_node_inputs_are_checked_against_the_target_schema():
    flow = define_flow(
        id="shop.restock",
        version="1.0.0",
        input=FlowInput,
        nodes=[
            tool_step("check", read_stock, input={"txt": from_input("item")}),
            agent_step("tell", clerk(), input={"message": "hi"}),
        ],
        output={},
    )
    errors = errors_of(define_pack(name="shop", tools=[read_stock], agents=[clerk()], flows=[flow]))
    assert errors == [
        "flow shop.restock@1.0.0: nodes[0] ('check'): input: tool shop.read@1.0.0 requires field 'text'",
        "flow shop.restock@1.0.0: nodes[0] ('check'): input.txt: tool shop.read@1.0.0 has no input "
        "field 'txt' (its fields: text)",
        "flow shop.restock@1.0.0: nodes[1] ('tell'): input: agent shop.clerk@1.0.0 "
        "requires field 'userMessage'",
        "flow shop.restock@1.0.0: nodes[1] ('tell'): input.message: agent shop.clerk@1.0.0 has no input "
        "field 'message' (its fields: userMessage)",
    ]


def test_references_into_node_outputs_are_checked():
    flow = define_flow(
        id="shop.restock",
        version="1.0.0",
        input=FlowInput,
        nodes=[
            tool_step("check", read_stock, input={"text": from_input("item")}),
            agent_step("tell", clerk(), input={"userMessage": from_node("check", "total")}),
        ],
        output={"answer": from_node("tell", "text"), "all": from_node("check")},
    )
    errors = errors_of(define_pack(name="shop", tools=[read_stock], agents=[clerk()], flows=[flow]))
    assert errors == [
        "flow shop.restock@1.0.0: nodes[1] ('tell'): input.userMessage: node 'check' "
        "(tool shop.read@1.0.0) has no output field 'total' (its fields: count)",
        "flow shop.restock@1.0.0: output.answer: node 'tell' (agent shop.clerk@1.0.0) has no output "
        "field 'text' (its fields: reply)",
    ]


def test_every_error_is_reported_at_once():
    errors = errors_of(
        define_pack(name="shop", tools=[read_stock, read_stock], agents=[clerk(tools=["shop.gone"])]),
        define_pack(name="store", tools=[write_stock]),
    )
    assert len(errors) == 3


def test_load_registry_reports_import_problems_with_the_module_path():
    with pytest.raises(DefinitionErrors) as raised:
        load_registry(["tests.pack_fixtures.does_not_exist", "tests.pack_fixtures.no_pack", "packs.my_pack"])
    assert raised.value.errors == [
        "pack module 'tests.pack_fixtures.does_not_exist' cannot be imported: "
        "No module named 'tests.pack_fixtures.does_not_exist'",
        "pack module 'tests.pack_fixtures.no_pack' does not define `pack = define_pack(...)`",
    ]


def test_a_definition_error_while_importing_names_the_pack_module():
    with pytest.raises(DefinitionError) as raised:
        import_pack("tests.pack_fixtures.bad_override")
    assert str(raised.value) == (
        "pack module 'tests.pack_fixtures.bad_override': agent fixture.agent@0.1.0: "
        "conversation_policy.hitl.tools.overrides['fixture.ask']: 'maybe' is not one of: "
        "always_ask, never_ask"
    )


def test_the_sample_packs_load():
    registry = load_registry(["packs.my_pack", "packs.acme_ops"])
    assert [pack.name for pack in registry.packs] == ["my-pack", "acme-ops"]
    assert registry.packs[0].module == "packs.my_pack"
