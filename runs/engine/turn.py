"""One agent turn: model → tool calls → results → model … until the model just answers.

Every call the model asks for goes through the call policy (``policy.prepare``); what it
returns is recorded through the recorder before the next step, so an execution that stops
anywhere continues from the journal without repeating a call recorded as done.
"""

import json
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from core.jsonlimits import without_nul
from core.logcontext import about_run
from kindgi import (
    AgentDefinition,
    ModelReply,
    ModelRequest,
    ToolConnection,
    ToolContext,
    ToolDefinition,
    ToolSpec,
)
from kindgi.agents import RETRIEVAL_QUERY
from runs.engine.chat_models import ChatModel, ModelError, scripted_model
from runs.engine.conversation import (
    ConversationViews,
    assistant_message,
    caught_up,
    from_outside,
    mail_message,
    model_request,
    pending_tool_calls,
    retrieved_message,
    tool_message,
    user_message,
)
from runs.engine.entries import Entry, EntryKind
from runs.engine.gates import Gate
from runs.engine.invocation import CallStatus, Invocation, invoke
from runs.engine.outcomes import Completed, Failed, Outcome, Suspended
from runs.engine.policy import (
    PolicyContext,
    ProposedCall,
    Ready,
    Refused,
    Stop,
    Suspend,
    gate_of,
    prepare,
    proposed,
)
from runs.engine.recorder import Recorder
from runs.engine.scheduler import CallTraits, plan_batches
from runs.engine.state import RunState

DRY_RUN_REPLY = "[dry-run: model call skipped]"
# A retrieval source's call id: retrieval-1, retrieval-2… (the turn's own, never the model's).
RETRIEVAL_CALL = "retrieval-{}"
EDITED_NOTE = "A reviewer changed the arguments before approving; the call ran with these."


class AgentTurn:
    """``choose_model``: the model that answers the agent (the driver reaches providers; the
    kernel alone, only an agent's scripted model)."""

    def __init__(
        self,
        *,
        agent: AgentDefinition,
        state: RunState,
        ctx: PolicyContext,
        recorder: Recorder,
        choose_model: Callable[[AgentDefinition], ChatModel] = scripted_model,
    ):
        self.agent = agent
        self.choose_model = choose_model
        self.state = state
        self.ctx = ctx
        self.run = ctx.run
        self.recorder = recorder
        self.messages: list[dict[str, Any]] = [dict(message) for message in self.run.messages]
        self.views = ConversationViews()
        # What the next record writes too: a model's reply is made durable with the calls it
        # asks for (or with the run's end), so a step costs one commit, not two. A reply lost
        # to a crash before then is asked for again; no tool has run on it.
        self._unrecorded: list[Entry] = []
        # The conversation is written with the turn's first step and when the run stops; in
        # between, the journal holds each step (``_catch_up`` reads them back). Writing it at
        # every step made a long turn rewrite its whole conversation at each one.
        self._messages_unsaved = False
        self._messages_written = bool(self.messages)
        self._model: ChatModel | None = None

    def _record(self, *entries: Entry) -> None:
        """Write ``entries``, with whatever waits to be written: a reply, and the conversation
        if it has never been written."""
        entries = (*self._unrecorded, *entries)
        self._unrecorded = []
        messages_json = None
        if self._messages_unsaved and not self._messages_written:
            messages_json = json.dumps(self.messages)
            self._messages_unsaved, self._messages_written = False, True
        if not entries and messages_json is None:
            return
        self.recorder.record(entries, messages_json=messages_json)
        for entry in entries:
            self.state.apply(entry.kind, entry.node_id, entry.payload or {})

    def unrecorded(self) -> tuple[list[Entry], list | None]:
        """What the run's end must write with it: entries and the conversation not yet written."""
        entries, messages = self._unrecorded, (self.messages if self._messages_unsaved else None)
        self._unrecorded, self._messages_unsaved = [], False
        return entries, messages

    def _grow(self, *messages: dict[str, Any]) -> None:
        self.messages.extend(messages)
        self._messages_unsaved = True

    # The loop

    def execute(self) -> Outcome:
        if not self.run.dry_run:
            failed = self._choose_model()
            if failed is not None:
                return failed
        if not self.messages:
            retrieved = self._retrieve()
            if not isinstance(retrieved, list):
                return retrieved  # it waits, or stopped; on resume it goes on from the journal
            mail = self.run.input.get("mail")
            first = [user_message(self.run.input["userMessage"]), *([mail_message(mail)] if mail else [])]
            self._grow(*self.run.history, *first, *retrieved)
        self._catch_up()
        while True:
            pending = pending_tool_calls(self.messages)
            if pending:
                step = self._run_calls(pending)
                if not isinstance(step, list):
                    return step
                self._grow(*step)  # the results are journaled; the conversation is written next time
                continue
            last = self.messages[-1]
            if last["role"] == "assistant":
                return Completed(output={"reply": last["content"]})
            if self.run.dry_run:
                self._grow(assistant_message(DRY_RUN_REPLY, []))
                self._record()
                continue
            failed = self._ask_model()
            if failed is not None:
                return failed

    def _catch_up(self) -> None:
        """The steps the journal holds beyond the conversation as last written (an execution
        that stopped without stopping the run: a crash, a lost database)."""
        grown = caught_up(
            self.messages,
            self.state.replies_since_stop,
            lambda call_id: self._message(call_id) if call_id in self.state.results else None,
        )
        if len(grown) > len(self.messages):
            self._grow(*grown[len(self.messages) :])

    # Before the model's first step

    def _choose_model(self) -> Failed | None:
        """The agent's model, once it is known to have every feature the agent needs."""
        try:
            model = self.choose_model(self.agent)
        except ModelError as error:
            return Failed(message=error.message)
        lacking = self.agent.lacks(model.model_name, model.features)
        if lacking:
            return Failed(message=f"missing-capability: {self.agent.label} {lacking}")
        self._model = model
        return None

    def _retrieve(self) -> list[dict[str, Any]] | Outcome:
        """Each retrieval source, given the user's message: a call like any other, through the
        call policy and the journal; what it returns the model reads as outside data."""
        sources = self.ctx.retrieval
        if not sources:
            return []
        query = self.run.input["userMessage"]
        pending = [
            {"id": RETRIEVAL_CALL.format(index), "toolId": tool_id, "arguments": {RETRIEVAL_QUERY: query}}
            for index, tool_id in enumerate(sources, start=1)
        ]
        results = self._run_calls(pending, ctx=replace(self.ctx, tools=sources))
        if not isinstance(results, list):
            return results
        return [
            retrieved_message(call_id=result["callId"], tool_id=result["toolId"], result=result["content"])
            for result in results
        ]

    # The model

    def _visible_tools(self) -> list[ToolSpec]:
        """The tools the model may see: in a read-only run, only the read-only ones."""
        return [
            ToolSpec(id=tool.id, description=tool.description, input_schema=tool.input_schema)
            for tool in self.ctx.tools.values()
            if tool is not None and (tool.is_read_only or not self.run.read_only)
        ]

    def _ask_model(self) -> Failed | None:
        views = self.views.update(self.messages)
        step = 1 + views.model_answers
        if step > self.ctx.limits.max_model_steps:
            return Failed(
                message=f"model-step-limit: the model asked for tools {step - 1} times without answering"
            )
        model = self._model
        assert model is not None, "chosen when the execution began"
        request = model_request(
            instructions=self.agent.instructions_for(self.run.input),
            messages=self.messages,
            tools=self._visible_tools(),
            views=views,
        )
        answered = self._reply(model, request, step)
        if isinstance(answered, Failed):
            return answered
        reply, entry = answered
        used_ids = set(views.call_ids) | set(self.state.results)
        calls = []
        for call in reply.tool_calls:
            call_id, repeat = call.id, 0
            while call_id in used_ids:  # a model may repeat an id, even within one batch
                repeat += 1
                call_id = f"{call.id}-{step}" if repeat == 1 else f"{call.id}-{step}-{repeat}"
            used_ids.add(call_id)
            calls.append({"id": call_id, "toolId": call.tool_id, "arguments": without_nul(call.arguments)})
        text = without_nul(reply.text)  # what a model says must be storable, whatever it says
        self._grow(assistant_message(text, calls))
        payload = dict(entry.payload)
        usage = payload.pop("usage")
        self._unrecorded.append(
            replace(entry, payload={**payload, "text": text, "toolCalls": calls, "usage": usage})
        )
        return None

    def _reply(self, model: ChatModel, request: ModelRequest, step: int) -> tuple[ModelReply, Entry] | Failed:
        """The model's reply and the entry to journal it with, asking again while a failure is
        retryable; each failed attempt is journaled."""
        attempts, attempt = self.ctx.limits.model_attempts, 0
        while True:
            attempt += 1
            started = time.perf_counter()
            try:
                reply = model.respond(request)
            except Exception as error:
                retryable = isinstance(error, ModelError) and error.retryable
                message = (
                    error.message if isinstance(error, ModelError) else f"{type(error).__name__}: {error}"
                )
                failed = _model_called(
                    model.model_name, step, attempt, started, error=message, retryable=retryable
                )
                self._record(failed)
                if retryable and attempt < attempts:
                    time.sleep(self.ctx.limits.model_retry_delay_seconds * attempt)
                    continue
                return Failed(message=f"model-error: {message}")
            return reply, _model_called(model.model_name, step, attempt, started, usage=reply.usage.to_dict())

    # Tool calls

    def _message(self, call_id: str) -> dict[str, Any]:
        done = self.state.results[call_id]
        return tool_message(
            call_id=call_id,
            tool_id=done.tool_id,
            result=done.result,
            outside_data=from_outside(done, self.ctx.tools.get(done.tool_id)),
        )

    def _traits(self, call: ProposedCall, ctx: PolicyContext) -> CallTraits:
        """What scheduling needs to know of a call (whether it runs is the policy's to decide)."""
        tool = ctx.tools.get(call.tool_id)
        if tool is None:
            return CallTraits(read_only=False)
        return CallTraits(
            read_only=tool.is_read_only,
            # A call through a connection may wait for its person to connect the app: on its own.
            may_wait=tool.may_wait or bool(tool.connection),
            sequential=tool.execution == "sequential",
            guarded=any(guardrail.applies_to(tool.id) for guardrail in ctx.guardrails),
            needs_approval=gate_of(call, tool, ctx, ctx.approved_tools, self.state).gate == Gate.ASK,
        )

    def _run_calls(
        self, pending: list[Mapping[str, Any]], *, ctx: PolicyContext | None = None
    ) -> list[dict[str, Any]] | Outcome:
        ctx = ctx or self.ctx
        step_ids = {call["id"] for call in pending}
        # Approvals met in this step join the set as the calls are judged, in order.
        approved = set(ctx.approved_tools) | self.state.approved_tools(leaving_out=step_ids)
        ctx = replace(ctx, approved_tools=approved)
        calls = [
            proposed(
                call_id=call["id"], tool_id=call["toolId"], arguments=call.get("arguments"), state=self.state
            )
            for call in pending
        ]
        batches = plan_batches(
            [self._traits(call, ctx) for call in calls], parallel=self.agent.parallel_tool_calls
        )
        for batch in batches:
            ready: list[ProposedCall] = []
            stop: Outcome | None = None
            for index in batch:
                if calls[index].call_id in self.state.results:
                    continue
                earlier = tuple(
                    self._message(c.call_id) for c in calls[:index] if c.call_id in self.state.results
                )
                verdict = prepare(replace(calls[index], earlier_results=earlier), self.state, ctx)
                if isinstance(verdict, Ready):
                    ready.append(verdict.call)
                    if verdict.call.approval is not None:
                        approved.add(verdict.call.tool_id)
                elif isinstance(verdict, Refused):
                    self._record(*verdict.call.notes, refusal_entry(verdict))
                else:
                    stop = _stopped(verdict, self.state)
                    break
            if ready:
                self._execute(ready)
            if stop is not None:
                return stop
        return [self._message(call.call_id) for call in calls]

    def _execute(self, ready: list[ProposedCall]) -> None:
        intents = [entry for call in ready for entry in (*call.notes, called_entry(call))]
        if all(call.tool.is_safe_to_repeat for call in ready):
            # Written with their results, in one commit: a crash before it asks the model again
            # (its reply is unwritten too) and repeats calls that are harmless to repeat.
            self._unrecorded.extend(intents)
        else:
            self._record(*intents)
        jobs = [(call.tool, call.validated, self._context(call.call_id, call.connection)) for call in ready]
        if len(jobs) == 1:
            invocations = [invoke(*jobs[0], limits=self.ctx.limits)]
        else:
            with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
                invocations = list(pool.map(lambda job: self._invoke_in_thread(*job), jobs))
        self._record(*(result_entry(call, done) for call, done in zip(ready, invocations, strict=True)))

    def _invoke_in_thread(self, tool: ToolDefinition, arguments: Any, context: ToolContext) -> Invocation:
        try:
            with about_run(context.run_id):  # the tool's own log lines, from this thread, name the run
                return invoke(tool, arguments, context, limits=self.ctx.limits)
        finally:
            self.recorder.thread_finished()

    def _context(self, call_id: str, connection: ToolConnection | None = None) -> ToolContext:
        return ToolContext(
            connection=connection,
            run_id=self.run.id,
            call_id=call_id,
            tenant_id=self.run.tenant_id,
            tenant_slug=self.run.tenant_slug,
            idempotency_key=f"{self.run.id}:{call_id}",
            dry_run=self.run.dry_run,
            read_only=self.run.read_only,
        )


def called_entry(call: ProposedCall) -> Entry:
    payload = {
        "callId": call.call_id,
        "toolId": call.tool.id,
        "toolVersion": call.tool.version,
        "arguments": call.arguments,
        "gate": call.gate.to_dict(),
    }
    if call.model_arguments is not None:
        payload["modelArguments"] = call.model_arguments
    if call.connection is not None:
        connection = call.connection
        payload["connection"] = {
            "app": connection.app,
            "owner": connection.owner,
            "connectionId": connection.connection_id,
        }
    return Entry(kind=EntryKind.TOOL_CALLED, node_id=call.node_id, payload=payload)


def result_entry(call: ProposedCall, invocation: Invocation, *, for_a_model: bool = True) -> Entry:
    """The call's result; a model whose arguments a reviewer edited is told so beside it."""
    result = invocation.result
    if for_a_model and call.model_arguments is not None:
        result = {"result": result, "note": EDITED_NOTE, "arguments": call.arguments}
    payload = {"callId": call.call_id, "toolId": call.tool.id, "result": result}
    if invocation.traceback:
        payload["traceback"] = invocation.traceback
    completed = invocation.status == CallStatus.COMPLETED
    kind = EntryKind.TOOL_COMPLETED if completed else EntryKind.TOOL_FAILED
    return Entry(kind=kind, node_id=call.node_id, duration_ms=invocation.duration_ms, payload=payload)


def refusal_entry(refusal: Refused) -> Entry:
    call = refusal.call
    payload: dict[str, Any] = {"callId": call.call_id, "toolId": call.tool_id, "reason": refusal.reason}
    # A failed tool's, and a gated call's: what the rule simulator judges again later.
    if refusal.kind == EntryKind.TOOL_FAILED or call.gate is not None:
        payload["arguments"] = call.arguments
    payload["result"] = refusal.result
    if call.gate is not None:
        payload["gate"] = call.gate.to_dict()
    return Entry(kind=refusal.kind, node_id=call.node_id, payload=payload)


def _stopped(verdict: Stop | Suspend, state: RunState) -> Outcome:
    if isinstance(verdict, Stop):
        return Failed(message=verdict.message)
    first = state.first_wait(verdict.waitpoint)
    return Suspended(waitpoint=verdict.waitpoint, node_id=verdict.call.node_id, first=first)


def _model_called(model_name: str, step: int, attempt: int, started: float, **fields: Any) -> Entry:
    return Entry(
        kind=EntryKind.MODEL_CALLED,
        duration_ms=round((time.perf_counter() - started) * 1000),
        payload={"model": model_name, "step": step, "attempt": attempt, **fields},
    )
