from pydantic import Field

from kindgi import CamelModel, agent_step, define_flow, from_input, from_node, tool_step
from packs.my_pack.agents import echo_agent
from packs.my_pack.tools import add_order_note, greet, lookup_order


class CheckOrderInput(CamelModel):
    order_id: str = Field(min_length=1)


class NoteOrderInput(CamelModel):
    order_id: str = Field(min_length=1)
    text: str = Field(min_length=1, max_length=1000)


class EchoInput(CamelModel):
    name: str = Field(min_length=1, max_length=200)


check_order = define_flow(
    id="my-pack.check-order",
    version="0.1.0",
    description="Looks up an order and reports its status and total.",
    input=CheckOrderInput,
    nodes=[tool_step("lookup", lookup_order, input={"orderId": from_input("orderId")})],
    output={
        "status": from_node("lookup", "status"),
        "orderId": from_node("lookup", "orderId"),
        "totalCents": from_node("lookup", "totalCents"),
    },
)

note_order = define_flow(
    id="my-pack.note-order",
    version="0.1.0",
    description="Checks that an order exists, then adds a note to it.",
    input=NoteOrderInput,
    nodes=[
        tool_step("lookup", lookup_order, input={"orderId": from_input("orderId")}),
        tool_step(
            "note",
            add_order_note,
            input={"orderId": from_node("lookup", "orderId"), "text": from_input("text")},
        ),
    ],
    output={
        "orderId": from_node("note", "orderId"),
        "noteId": from_node("note", "noteId"),
        "noteCount": from_node("note", "noteCount"),
    },
)

echo_flow = define_flow(
    id="my-pack.echo-flow",
    version="0.1.0",
    description="Greets someone with a read-only tool, then hands the greeting to the echo agent.",
    input=EchoInput,
    nodes=[
        tool_step("greet", greet, input={"name": from_input("name")}),
        agent_step("respond", echo_agent, input={"userMessage": from_node("greet", "greeting")}),
    ],
    output={
        "reply": from_node("respond", "reply"),
        "greeting": from_node("greet", "greeting"),
    },
)
