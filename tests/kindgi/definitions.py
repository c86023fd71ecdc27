"""Small definitions shared by the SDK's tests."""

from pydantic import BaseModel

from kindgi import Effect, tool


class Text(BaseModel):
    text: str


class Count(BaseModel):
    count: int


@tool(id="shop.read", version="1.0.0", mutating=False, effects=[Effect.reads("shop:stock")])
def read_stock(query: Text) -> Count:
    """Reads the stock."""
    return Count(count=len(query.text))


@tool(id="shop.write", version="1.0.0", effects=[Effect.writes("shop:stock")])
def write_stock(change: Text) -> Count:
    """Writes the stock."""
    return Count(count=1)
