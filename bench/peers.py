"""The peers' figures, measured in the same run on the same machine, with the same shapes of
work: Pydantic AI (in memory, its own test model calling a no-op tool), and LangGraph when it is
installed (pip install -e '.[bench]')."""

import asyncio
import time

from bench.stats import percentile, summary

REPETITIONS = 5


def measure_peers(chosen: set[str], *, quick: bool, repetitions: int = REPETITIONS) -> dict:
    peers = {}
    try:
        peers["pydantic-ai"] = _pydantic_ai(chosen, repetitions)
    except Exception as error:  # a peer's failure must not lose Kindgi's figures
        peers["pydantic-ai"] = {"error": f"{type(error).__name__}: {error}"}
    try:
        import langgraph  # noqa: F401
    except ImportError:
        peers["langgraph"] = {"error": "not installed (pip install -e '.[bench]')"}
    else:
        try:
            peers["langgraph"] = _langgraph(chosen, repetitions)
        except Exception as error:
            peers["langgraph"] = {"error": f"{type(error).__name__}: {error}"}
    return peers


def _pydantic_ai(chosen: set[str], repetitions: int) -> dict:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import UsageLimits

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

        unlimited = UsageLimits(request_limit=None)
        agent.run_sync("go", usage_limits=unlimited)
        per_call = []
        for _ in range(repetitions):
            started = time.perf_counter()
            agent.run_sync("go", usage_limits=unlimited)
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
        for _ in range(repetitions):
            started = time.perf_counter()
            parallel.run_sync("go")
            steps.append((time.perf_counter() - started) * 1000)
        figures["W2.reads_step_ms"] = summary(steps)

    if "W3" in chosen:
        from pydantic_ai import DeferredToolRequests, DeferredToolResults

        def post_then_answer(messages, info):
            if any(part.part_kind == "tool-return" for m in messages for part in m.parts):
                return ModelResponse(parts=[TextPart("posted")])
            return ModelResponse(parts=[ToolCallPart("post_update", {"message": "All systems go."}, "p1")])

        gated = Agent(FunctionModel(post_then_answer), output_type=[str, DeferredToolRequests])

        @gated.tool_plain(requires_approval=True)
        def post_update(message: str) -> dict:
            return {"posted": True}

        samples = []
        for _ in range(repetitions):
            suspend, resume = [], []
            for _ in range(40):
                started = time.perf_counter()
                waiting = gated.run_sync("Post it.")
                suspend.append((time.perf_counter() - started) * 1000)
                assert isinstance(waiting.output, DeferredToolRequests)
                started = time.perf_counter()
                done = gated.run_sync(
                    message_history=waiting.all_messages(),
                    deferred_tool_results=DeferredToolResults(approvals={"p1": True}),
                )
                resume.append((time.perf_counter() - started) * 1000)
                assert done.output == "posted"
            samples.append((suspend, resume))
        figures["W3.suspend_p50_ms_in_memory"] = summary([percentile(rep[0], 0.5) for rep in samples])
        figures["W3.resume_p50_ms_in_memory"] = summary([percentile(rep[1], 0.5) for rep in samples])
    return figures


def _langgraph(chosen: set[str], repetitions: int) -> dict:
    """A graph that does what Kindgi's turn does: a model node that asks for a call, a tool node
    that makes it. Durable: the SQLite checkpointer, writing every step before going on."""
    import operator
    import sqlite3
    import tempfile
    import uuid
    from pathlib import Path
    from typing import Annotated, TypedDict

    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, Send, interrupt

    figures = {}
    folder = tempfile.TemporaryDirectory(prefix="kindgi-bench-langgraph-")
    connection = sqlite3.connect(Path(folder.name) / "checkpoints.sqlite3", check_same_thread=False)
    saver = SqliteSaver(connection)

    def thread() -> dict:
        return {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": 10_000}

    class Turn(TypedDict):
        wanted: int
        done: int
        # The conversation, as Kindgi keeps it: each call and each result a message.
        messages: Annotated[list[dict], operator.add]

    def model(state: Turn) -> dict:
        if state["done"] >= state["wanted"]:
            return {"messages": [{"role": "assistant", "content": "done"}]}
        call = {"id": f"c{state['done']}", "toolId": "noop", "arguments": {"step": state["done"]}}
        return {"messages": [{"role": "assistant", "content": "", "toolCalls": [call]}]}

    def noop(state: Turn) -> dict:
        call = state["messages"][-1]["toolCalls"][0]
        result = {"ok": True, "step": call["arguments"]["step"]}
        return {
            "done": state["done"] + 1,
            "messages": [{"role": "tool", "callId": call["id"], "content": result}],
        }

    def route(state: Turn) -> str:
        return "tool" if state["done"] < state["wanted"] else END

    builder = StateGraph(Turn)
    builder.add_node("model", model)
    builder.add_node("tool", noop)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tool", END])
    builder.add_edge("tool", "model")

    if "W1" in chosen:
        for name, graph, options in (
            ("W1.per_call_ms_sqlite_sync", builder.compile(checkpointer=saver), {"durability": "sync"}),
            ("W1.per_call_ms_no_persistence", builder.compile(), {}),
        ):
            graph.invoke({"wanted": 5, "done": 0, "messages": []}, thread(), **options)
            per_call = []
            for _ in range(repetitions):
                started = time.perf_counter()
                graph.invoke({"wanted": 50, "done": 0, "messages": []}, thread(), **options)
                per_call.append((time.perf_counter() - started) * 1000 / 50)
            figures[name] = summary(per_call)
        figures |= _langgraph_postgres(builder, thread, repetitions)

    if "W2" in chosen:

        class FanOut(TypedDict):
            slept: Annotated[list[int], operator.add]

        def sleep_read(call: dict) -> dict:
            time.sleep(0.1)
            return {"slept": [100]}

        fan = StateGraph(FanOut)
        fan.add_node("model", lambda state: {})
        fan.add_node("sleep_read", sleep_read)
        fan.add_edge(START, "model")
        fan.add_conditional_edges(
            "model", lambda state: [Send("sleep_read", {}) for _ in range(8)], ["sleep_read"]
        )
        fan.add_edge("sleep_read", END)
        graph = fan.compile()
        steps = []
        for _ in range(repetitions):
            started = time.perf_counter()
            graph.invoke({"slept": []}, thread())
            steps.append((time.perf_counter() - started) * 1000)
        figures["W2.reads_step_ms"] = summary(steps)

    if "W3" in chosen:

        class Gate(TypedDict):
            posted: bool

        def ask(state: Gate) -> dict:
            interrupt({"tool": "post-update", "arguments": {"message": "All systems go."}})
            return {"posted": True}

        gated = StateGraph(Gate)
        gated.add_node("ask", ask)
        gated.add_edge(START, "ask")
        gated.add_edge("ask", END)
        graph = gated.compile(checkpointer=saver)
        samples = []
        for _ in range(repetitions):
            suspend, resume = [], []
            for _ in range(40):
                config = thread()
                started = time.perf_counter()
                graph.invoke({"posted": False}, config, durability="sync")
                suspend.append((time.perf_counter() - started) * 1000)
                started = time.perf_counter()
                graph.invoke(Command(resume=True), config, durability="sync")
                resume.append((time.perf_counter() - started) * 1000)
            samples.append((suspend, resume))
        figures["W3.suspend_p50_ms_sqlite"] = summary([percentile(rep[0], 0.5) for rep in samples])
        figures["W3.resume_p50_ms_sqlite"] = summary([percentile(rep[1], 0.5) for rep in samples])
        figures |= _langgraph_agent_cycle(saver, thread, repetitions)
    connection.close()
    folder.cleanup()
    return figures


def _langgraph_agent_cycle(saver, thread, repetitions: int) -> dict:
    """LangGraph doing the work of Kindgi's W3, as one would build it there: ``MessagesState``, a
    model node whose chat model asks for the call, a ``ToolNode`` whose tool calls
    ``interrupt()``, the SQLite checkpointer writing every step; then the resume, until the model
    answers."""
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition
    from langgraph.types import Command, interrupt

    class AsksToPost(BaseChatModel):
        """Kindgi's scripted status model: ask to post the user's message, then say it is done."""

        @property
        def _llm_type(self) -> str:
            return "asks-to-post"

        def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
            if isinstance(messages[-1], ToolMessage):
                message = AIMessage(content="Posted to the status page.")
            else:
                call = {
                    "id": "call_post_update",
                    "name": "post_update",
                    "args": {"message": messages[-1].content},
                }
                message = AIMessage(content="", tool_calls=[call])
            return ChatResult(generations=[ChatGeneration(message=message)])

    @tool
    def post_update(message: str) -> dict:
        """Posts a message to the public status page."""
        approved = interrupt({"tool": "post_update", "arguments": {"message": message}})
        return {"posted": bool(approved)}

    model = AsksToPost()

    def agent(state: MessagesState) -> dict:
        return {"messages": [model.invoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([post_update]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition)
    builder.add_edge("tools", "agent")
    graph = builder.compile(checkpointer=saver)

    def cycle() -> tuple[float, float]:
        config = thread()
        started = time.perf_counter()
        waiting = graph.invoke({"messages": [("user", "All systems go.")]}, config, durability="sync")
        suspended = time.perf_counter()
        assert "__interrupt__" in waiting
        done = graph.invoke(Command(resume=True), config, durability="sync")
        assert done["messages"][-1].content == "Posted to the status page."
        return (suspended - started) * 1000, (time.perf_counter() - suspended) * 1000

    cycle()
    samples = []
    for _ in range(repetitions):
        measured = [cycle() for _ in range(40)]
        samples.append(([m[0] for m in measured], [m[1] for m in measured]))
    return {
        "W3.suspend_p50_ms_sqlite_agent": summary([percentile(rep[0], 0.5) for rep in samples]),
        "W3.resume_p50_ms_sqlite_agent": summary([percentile(rep[1], 0.5) for rep in samples]),
    }


def _langgraph_postgres(builder, thread, repetitions: int) -> dict:
    """W1's graph with LangGraph's PostgreSQL checkpointer (what a scale-out user would pick), on a
    database of its own; nothing when PostgreSQL does not answer."""
    import os
    import socket

    try:
        socket.create_connection(("127.0.0.1", 5432), timeout=1).close()
    except OSError:
        return {}
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver

    server = os.environ.get("KINDGI_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432")
    name = f"kindgi_bench_langgraph_{os.getpid()}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    try:
        with PostgresSaver.from_conn_string(f"{server}/{name}") as saver:
            saver.setup()
            graph = builder.compile(checkpointer=saver)
            graph.invoke({"wanted": 5, "done": 0, "messages": []}, thread(), durability="sync")
            per_call = []
            for _ in range(repetitions):
                started = time.perf_counter()
                graph.invoke({"wanted": 50, "done": 0, "messages": []}, thread(), durability="sync")
                per_call.append((time.perf_counter() - started) * 1000 / 50)
        return {"W1.per_call_ms_postgres_sync": summary(per_call)}
    finally:
        with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
