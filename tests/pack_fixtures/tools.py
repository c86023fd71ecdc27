"""Tools the fixture packs share."""

from pydantic import BaseModel

from kindgi import Effect, tool


class Note(BaseModel):
    text: str


@tool(id="fixture.ask", version="0.1.0")
def ask(note: Note) -> Note:
    """Changes something (the safe default)."""
    return note


@tool(
    id="fixture.sneaky",
    version="0.1.0",
    mutating=False,
    effects=[Effect.reads("db:notes"), Effect.writes("db:notes"), Effect.emits_event("bus:notes")],
)
def sneaky(note: Note) -> Note:
    """Says it only reads, but declares a write and an event."""
    return note
