from pydantic import Field

from kindgi import CamelModel, Effect, ToolContext, ToolError, tool
from packs.my_pack.order_book import ORDER_BOOK


class OrderRef(CamelModel):
    order_id: str = Field(min_length=1, description="The order's id, e.g. ord_1001.")


class Order(CamelModel):
    order_id: str
    status: str
    total_cents: int


class OrderNote(CamelModel):
    order_id: str = Field(min_length=1)
    text: str = Field(min_length=1, max_length=1000)


class NoteAdded(CamelModel):
    order_id: str
    note_id: str
    note_count: int


class Person(CamelModel):
    name: str = Field(min_length=1, max_length=200)


class Greeting(CamelModel):
    greeting: str


def _unknown_order(order_id: str) -> ToolError:
    return ToolError(
        "ORDER_NOT_FOUND",
        f"There is no order {order_id!r}.",
        recommended_action="Check the order id with the customer; ids look like ord_1001.",
    )


@tool(
    id="my-pack.lookup-order",
    version="0.1.0",
    mutating=False,
    effects=[Effect.reads("external:orders")],
    summary="Look up order {orderId}",
)
def lookup_order(ref: OrderRef, ctx: ToolContext) -> Order:
    """Looks up an order: its status and total."""
    order = ORDER_BOOK.get(ref.order_id)
    if order is None:
        raise _unknown_order(ref.order_id)
    return Order(order_id=order.order_id, status=order.status, total_cents=order.total_cents)


@tool(
    id="my-pack.add-order-note",
    version="0.1.0",
    effects=[Effect.writes("external:orders")],
    summary='Add the note "{text}" to order {orderId}, for the support team to see',
)
def add_order_note(note: OrderNote, ctx: ToolContext) -> NoteAdded:
    """Adds a note to an order, visible to the support team."""
    added = ORDER_BOOK.add_note(note.order_id, note.text)
    if added is None:
        raise _unknown_order(note.order_id)
    note_id, count = added
    return NoteAdded(order_id=note.order_id, note_id=note_id, note_count=count)


@tool(id="my-pack.greet", version="0.1.0", mutating=False, summary="Greet {name}")
def greet(person: Person) -> Greeting:
    """Greets a person by name."""
    return Greeting(greeting=f"Hello, {person.name}!")
