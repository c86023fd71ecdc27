"""The benchmarks' pack: no-op and sleeping tools, and scripted models that know what to ask for
from the user's message alone (so that every process scripts them alike)."""

import time

from pydantic import BaseModel

from kindgi import ModelReply, ModelRequest, ScriptedModel, ToolCall, define_agent, define_pack, tool


class Nothing(BaseModel):
    step: int = 0


class Small(BaseModel):
    ok: bool
    step: int


class Pause(BaseModel):
    ms: int = 100


class Slept(BaseModel):
    slept_ms: int


@tool(id="bench.noop", version="1.0.0", mutating=False, idempotent=True)
def noop(nothing: Nothing) -> Small:
    """Does nothing and says so."""
    return Small(ok=True, step=nothing.step)


@tool(id="bench.sleep-read", version="1.0.0", mutating=False)
def sleep_read(pause: Pause) -> Slept:
    """Reads nothing, slowly."""
    time.sleep(pause.ms / 1000)
    return Slept(slept_ms=pause.ms)


@tool(id="bench.sleep-write", version="1.0.0")
def sleep_write(pause: Pause) -> Slept:
    """Writes nothing, slowly (a mutating tool: it runs alone)."""
    time.sleep(pause.ms / 1000)
    return Slept(slept_ms=pause.ms)


def _sequential(request: ModelRequest) -> ModelReply:
    """One no-op call per step until the user's number of calls is reached, then an answer."""
    wanted = int(request.last_user_message)
    done = len(request.results_since_user)
    if done >= wanted:
        return ModelReply(text=f"{done} calls")
    return ModelReply(tool_calls=(ToolCall(id=f"c{done}", tool_id="bench.noop", arguments={"step": done}),))


def _fan_out(request: ModelRequest) -> ModelReply:
    """All of the user's "<tool> <count>" calls in one message, then an answer."""
    if request.results_since_user:
        return ModelReply(text="done")
    tool_id, count = request.last_user_message.split()
    return ModelReply(
        tool_calls=tuple(
            ToolCall(id=f"c{i}", tool_id=tool_id, arguments={"ms": 100}) for i in range(int(count))
        )
    )


sequential = define_agent(
    id="bench.sequential",
    version="1.0.0",
    name="Sequential",
    instructions="Call the no-op tool as many times as the user says, one at a time.",
    tools=[noop],
    model=ScriptedModel(_sequential, name="bench.sequential"),
)
fan_out = define_agent(
    id="bench.fan-out",
    version="1.0.0",
    name="Fan-out",
    instructions="Call the tool the user names, as many times as they say, all at once.",
    tools=[sleep_read, sleep_write],
    model=ScriptedModel(_fan_out, name="bench.fan-out"),
)

pack = define_pack(name="bench", tools=[noop, sleep_read, sleep_write], agents=[sequential, fan_out])
