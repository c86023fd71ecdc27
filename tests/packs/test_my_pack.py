import pytest

from kindgi import ToolContext, ToolError
from packs.my_pack import pack
from packs.my_pack.tools import (
    NoteAdded,
    Order,
    OrderNote,
    OrderRef,
    Person,
    add_order_note,
    greet,
    lookup_order,
)


def test_lookup_order_reads_the_order_book():
    order = lookup_order(OrderRef(order_id="ord_1001"), ToolContext())
    assert order == Order(order_id="ord_1001", status="shipped", total_cents=4200)
    assert order.model_dump(by_alias=True) == {"orderId": "ord_1001", "status": "shipped", "totalCents": 4200}


def test_an_unknown_order_is_a_tool_error_with_a_hint():
    with pytest.raises(ToolError) as error:
        lookup_order(OrderRef(order_id="ord_9"), ToolContext())
    assert error.value.code == "ORDER_NOT_FOUND"
    assert "ord_1001" in error.value.recommended_action


def test_add_order_note_writes_to_the_order_book():
    first = add_order_note(OrderNote(order_id="ord_1001", text="Customer called"), ToolContext())
    second = add_order_note(OrderNote(order_id="ord_1001", text="Called again"), ToolContext())
    assert first == NoteAdded(order_id="ord_1001", note_id="note_1", note_count=1)
    assert second.note_count == 2
    with pytest.raises(ToolError):
        add_order_note(OrderNote(order_id="ord_404", text="x"), ToolContext())


def test_greet():
    assert greet(Person(name="Ada")).greeting == "Hello, Ada!"


def test_declarations():
    tools = {t.id: t for t in pack.tools}
    assert tools["my-pack.lookup-order"].is_read_only
    assert [e.describe() for e in tools["my-pack.lookup-order"].effects] == ["reads external:orders"]
    assert not tools["my-pack.add-order-note"].is_read_only
    assert [e.describe() for e in tools["my-pack.add-order-note"].effects] == ["writes external:orders"]
    assert tools["my-pack.greet"].is_read_only
    assert {f.id for f in pack.flows} == {"my-pack.check-order", "my-pack.note-order", "my-pack.echo-flow"}


def test_the_echo_flow_greets_then_hands_the_greeting_to_its_agent():
    echo = next(f for f in pack.flows if f.id == "my-pack.echo-flow")
    assert [(n.id, n.kind.value, n.target) for n in echo.nodes] == [
        ("greet", "tool", "my-pack.greet"),
        ("respond", "agent", "my-pack.echo-agent"),
    ]
    assert echo.nodes[1].input == {"userMessage": {"$ref": "#/nodes/greet/output/greeting"}}
    assert echo.output == {
        "reply": {"$ref": "#/nodes/respond/output/reply"},
        "greeting": {"$ref": "#/nodes/greet/output/greeting"},
    }


def test_the_order_assistant_runs_on_a_chat_completions_server_and_asks_before_it_notes():
    """The sample agent's own model string, pointed at a local server in place of Ollama's."""
    import json
    from dataclasses import replace

    from kindgi.testing import PackTester
    from packs.my_pack.agents import order_assistant
    from packs.my_pack.order_book import ORDER_BOOK
    from tests.chat_server import ChatServer, text_reply, tool_calls_reply

    assert order_assistant.model == "openai-compatible:llama3.2@http://127.0.0.1:11434/v1"
    with ChatServer() as server:
        local = replace(
            order_assistant, model=order_assistant.model.replace("http://127.0.0.1:11434/v1", server.base_url)
        )
        tester = PackTester(replace(pack, agents=(local,), flows=()))
        server.answers = [
            tool_calls_reply(("c1", "my-pack__lookup-order", json.dumps({"orderId": "ord_1001"}))),
            tool_calls_reply(
                ("c2", "my-pack__add-order-note", json.dumps({"orderId": "ord_1001", "text": "Asked"}))
            ),
            text_reply("Shipped, and noted."),
        ]
        notes_before = len(ORDER_BOOK.get("ord_1001").notes)
        run = tester.run_agent(
            "my-pack.order-assistant",
            "Where is ord_1001? Note that they asked.",
            parameters={"tone": "brisk"},
        )
        assert run.status == "waiting"
        assert run.waiting_for.tool_id == "my-pack.add-order-note"
        assert run.tools_called == ["my-pack.lookup-order"]
        first = server.requests[0]["body"]
        assert first["model"] == "llama3.2"
        assert "Answer in a brisk tone" in first["messages"][0]["content"]
        run.approve()
        assert (run.status, run.reply) == ("completed", "Shipped, and noted.")
        assert len(ORDER_BOOK.get("ord_1001").notes) == notes_before + 1
