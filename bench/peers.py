"""The peers' figures, measured in the same run on the same machine, with the same shapes of
work: Pydantic AI (in memory, its own test model calling a no-op tool), and LangGraph when it is
installed (pip install -e '.[bench]')."""

import asyncio
import time

from bench.stats import summary

REPETITIONS = 5


def measure_peers(chosen: set[str], *, quick: bool) -> dict:
    peers = {}
    try:
        peers["pydantic-ai"] = _pydantic_ai(chosen)
    except Exception as error:  # a peer's failure must not lose Kindgi's figures
        peers["pydantic-ai"] = {"error": f"{type(error).__name__}: {error}"}
    try:
        import langgraph  # noqa: F401
    except ImportError:
        peers["langgraph"] = {"error": "not installed (pip install -e '.[bench]')"}
    else:
        try:
            peers["langgraph"] = _langgraph(chosen)
        except Exception as error:
            peers["langgraph"] = {"error": f"{type(error).__name__}: {error}"}
    return peers


def _pydantic_ai(chosen: set[str]) -> dict:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    figures = {}

    def sequential(calls: int) -> FunctionModel:
        def respond(messages, info):
            done = sum(1 for m in messages for part in m.parts if part.part_kind == "tool-return")
            if done >= calls:
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(parts=[ToolCallPart("noop", {"step": done}, tool_call_id=f"c{done}")])

        return FunctionModel(respond)

    if "W1" in chosen:
        agent = Agent(sequential(50))

        @agent.tool_plain
        def noop(step: int) -> dict:
            return {"ok": True, "step": step}

        agent.run_sync("go")
        per_call = []
        for _ in range(REPETITIONS):
            started = time.perf_counter()
            agent.run_sync("go")
            per_call.append((time.perf_counter() - started) * 1000 / 50)
        figures["W1.per_call_ms_in_memory"] = summary(per_call)

    if "W2" in chosen:

        def fan_out(messages, info):
            if any(part.part_kind == "tool-return" for m in messages for part in m.parts):
                return ModelResponse(parts=[TextPart("done")])
            return ModelResponse(
                parts=[ToolCallPart("sleep_read", {}, tool_call_id=f"c{i}") for i in range(8)]
            )

        parallel = Agent(FunctionModel(fan_out))

        @parallel.tool_plain
        async def sleep_read() -> dict:
            await asyncio.sleep(0.1)
            return {"slept_ms": 100}

        steps = []
        for _ in range(REPETITIONS):
            started = time.perf_counter()
            parallel.run_sync("go")
            steps.append((time.perf_counter() - started) * 1000)
        figures["W2.reads_step_ms"] = summary(steps)
    return figures


def _langgraph(chosen: set[str]) -> dict:
    raise NotImplementedError("the LangGraph comparison is not written yet")
