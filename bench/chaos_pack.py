"""The chaos run's pack: agents whose one call is gated and writes to a ledger outside Kindgi.

Each call appends ``<idempotency key> <pid>`` to the file ``KINDGI_CHAOS_LEDGER`` names, then
holds on for a moment (the window a fault can strike in), and while it holds, a file in
``<ledger>.inflight/`` names the process running it. The idempotent tool writes a key at most
once, however often it is called with it; the other writes it every time: the ledger then shows
whether any call ran twice.
"""

import os
import time
from pathlib import Path

from pydantic import BaseModel

from kindgi import (
    Effect,
    ModelReply,
    ModelRequest,
    ScriptedModel,
    ToolCall,
    ToolContext,
    define_agent,
    define_pack,
    tool,
)

HOLD_SECONDS = 0.4


class Note(BaseModel):
    text: str


class Written(BaseModel):
    key: str


def ledger() -> Path:
    return Path(os.environ["KINDGI_CHAOS_LEDGER"])


def _write(note: Note, ctx: ToolContext, *, once: bool) -> Written:
    key = ctx.idempotency_key
    inflight = ledger().with_suffix(".inflight") / key.replace(":", "_")
    inflight.parent.mkdir(exist_ok=True)
    inflight.write_text(str(os.getpid()))
    try:
        seen = ledger().read_text().split() if once and ledger().exists() else []
        if key not in seen:
            with ledger().open("a") as out:  # one short O_APPEND write: whole lines, even from many workers
                out.write(f"{key} {os.getpid()}\n")
        time.sleep(HOLD_SECONDS)
    finally:
        inflight.unlink(missing_ok=True)
    return Written(key=key)


@tool(id="chaos.append", version="1.0.0", effects=[Effect.writes("chaos:ledger")])
def append(note: Note, ctx: ToolContext) -> Written:
    """Appends a line to the ledger (not safe to repeat)."""
    return _write(note, ctx, once=False)


@tool(id="chaos.append-once", version="1.0.0", idempotent=True, effects=[Effect.writes("chaos:ledger")])
def append_once(note: Note, ctx: ToolContext) -> Written:
    """Appends a line to the ledger once per idempotency key (safe to repeat)."""
    return _write(note, ctx, once=True)


def _writer(tool_id: str):
    def respond(request: ModelRequest) -> ModelReply:
        if request.results_since_user:
            return ModelReply(text="written")
        return ModelReply(
            tool_calls=(ToolCall(id="write", tool_id=tool_id, arguments={"text": request.last_user_message}),)
        )

    return ScriptedModel(respond, name=f"chaos.{tool_id}")


def _agent(agent_id: str, tool_definition) -> object:
    return define_agent(
        id=agent_id,
        version="1.0.0",
        name=agent_id,
        instructions="Write the user's note to the ledger.",
        tools=[tool_definition],
        model=_writer(tool_definition.id),
        # A tool that changes things asks on its first use: every run waits for a decision.
        conversation_policy={"hitl": {"tools": {}}},
    )


writer = _agent("chaos.writer", append)
idempotent_writer = _agent("chaos.idempotent-writer", append_once)

pack = define_pack(name="chaos", tools=[append, append_once], agents=[writer, idempotent_writer])
