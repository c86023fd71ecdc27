"""Execute one agent turn: model → tool calls → results → model … until the model just answers.

The conversation lives in ``Run.messages``; every model answer and every tool
call's start and end are journaled before the next step, so an execution that
stops anywhere continues from the journal without repeating a call that is
recorded as done.
"""

import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connections

from kindgi import AgentDefinition, GuardedCall, Registry, ToolContext, ToolDefinition, ToolSpec
from kindgi.conditions import parse_condition
from kindgi_site.jsonlimits import without_nul
from kindgi_site.logs import about_run
from runs import actions
from runs.engine.conversation import (
    ConversationViews,
    assistant_message,
    model_request,
    pending_tool_calls,
    tool_message,
    user_message,
)
from runs.engine.gates import CallFacts, Gate, GateDecision, Override, decide_gate
from runs.engine.invocation import CallStatus, Invocation, error_data, invoke, validate_arguments
from runs.engine.models import ModelError, resolve_model
from runs.engine.outcomes import Completed, Entry, Failed, Outcome, Suspended
from runs.engine.scheduler import CallTraits, plan_batches
from runs.models import JournalKind, Run
from runs.rules import rules_for_tenant
from runs.selectors import conversation_approvals, conversation_history
from tools.selectors import agent_admin_overrides

DRY_RUN_REPLY = "[dry-run: model call skipped]"
APPROVAL_WAITPOINT = "approval"
GUARDRAIL_REFUSED = "GUARDRAIL_REFUSED"
TOOL_INTERRUPTED = "TOOL_INTERRUPTED"
INTERRUPTED = "tool-call:interrupted"


def interrupted_waitpoint(call_id: str, tool: ToolDefinition, arguments: Any) -> dict[str, Any]:
    """Ask a person whether to run again a call whose executor died before recording its result."""
    return {
        "kind": APPROVAL_WAITPOINT,
        "subjectKind": INTERRUPTED,
        "callId": call_id,
        "toolId": tool.id,
        "toolVersion": tool.version,
        "arguments": arguments if isinstance(arguments, dict) else {},
        "gate": {
            "gate": "ask",
            "reason": "recovery: the call started but its result was never recorded; it may already have "
            "taken effect. Approve to run it again, reject to tell the model it did not complete.",
        },
    }


TOOL_NOT_ALLOWED = "TOOL_NOT_ALLOWED"
EDITED_NOTE = "A reviewer changed the arguments before approving; the call ran with these."
RESULT_KINDS = {JournalKind.TOOL_COMPLETED, JournalKind.TOOL_FAILED, JournalKind.TOOL_REFUSED}


@dataclass(frozen=True, kw_only=True)
class ReadyCall:
    """A call cleared to run: its validated arguments and the gate that let it through."""

    call: Mapping[str, Any]
    tool: ToolDefinition
    arguments: dict[str, Any]
    gate: GateDecision
    # The model's arguments, when a reviewer approved edited ones instead.
    model_arguments: dict[str, Any] | None = None


def _setting(name: str, default: Any) -> Any:
    return getattr(settings, name, default)


class AgentTurnExecution:
    def __init__(self, run: Run, *, token: str, agent: AgentDefinition, registry: Registry):
        self.run = run
        self.token = token
        self.agent = agent
        self.messages: list[dict[str, Any]] = list(run.messages)
        self.views = ConversationViews()
        self.tools: dict[str, ToolDefinition | None] = {
            ref.id: registry.tool(ref.id, ref.version) for ref in agent.tools
        }
        self.overrides = _effective_overrides(agent)
        self.rules = rules_for_tenant(run.tenant_id)
        self.results: dict[str, dict[str, Any]] = {}  # callId → tool message
        self.called: set[str] = set()
        self.resolutions: dict[str, Mapping[str, Any]] = {}  # callId → a person's decision
        self.recoveries: dict[str, Mapping[str, Any]] = {}  # callId → whether to repeat an interrupted call
        self.approved_earlier = conversation_approvals(run)
        # What the next record writes too: a model's reply is made durable with the calls it
        # asks for (or with the run's end), so a step costs one commit, not two. A reply lost
        # to a crash before then is asked for again; no tool has run on it.
        self._unrecorded: list[Entry] = []
        self._messages_unsaved = False
        for entry in run.journal.all():
            payload = entry.payload
            if entry.kind == JournalKind.TOOL_CALLED:
                self.called.add(payload["callId"])
            elif entry.kind in RESULT_KINDS:
                self.results[payload["callId"]] = self._message(
                    payload["toolId"], payload["callId"], payload["result"]
                )
            elif entry.kind == JournalKind.WAIT_RESUMED:
                waitpoint = payload.get("waitpoint") or {}
                if waitpoint.get("subjectKind") == INTERRUPTED:
                    self.recoveries[waitpoint["callId"]] = payload["resolution"]
                elif waitpoint.get("kind") == APPROVAL_WAITPOINT:
                    self.resolutions[waitpoint["callId"]] = {
                        **payload["resolution"],
                        "toolId": waitpoint["toolId"],
                    }

    def _message(self, tool_id: str, call_id: str, result: Any) -> dict[str, Any]:
        tool = self.tools.get(tool_id)
        outside = bool(tool and tool.result_is_outside_data)
        return tool_message(call_id=call_id, tool_id=tool_id, result=result, outside_data=outside)

    def _record(self, *entries: Entry) -> None:
        """Write ``entries``, with whatever waits to be written: a reply, the conversation."""
        entries = (*self._unrecorded, *entries)
        messages_json = self.views.update(self.messages).stored_json() if self._messages_unsaved else None
        self._unrecorded, self._messages_unsaved = [], False
        actions.do_record(self.run.pk, token=self.token, entries=entries, messages_json=messages_json)

    def unrecorded(self) -> tuple[list[Entry], list | None]:
        """What the run's end must write with it: entries and the conversation not yet written."""
        entries, messages = self._unrecorded, (self.messages if self._messages_unsaved else None)
        self._unrecorded, self._messages_unsaved = [], False
        return entries, messages

    # The loop

    def execute(self) -> Outcome:
        if not self.messages:
            self.messages = [*conversation_history(self.run), user_message(self.run.input["userMessage"])]
            self._messages_unsaved = True
        while True:
            pending = pending_tool_calls(self.messages)
            if pending:
                step = self._run_calls(pending)
                if not isinstance(step, list):
                    return step
                # The results are in the journal already; the conversation is written next time.
                self.messages.extend(step)
                self._messages_unsaved = True
                continue
            last = self.messages[-1]
            if last["role"] == "assistant":
                return Completed(output={"reply": last["content"]})
            if self.run.dry_run:
                self.messages.append(assistant_message(DRY_RUN_REPLY, []))
                self._messages_unsaved = True
                self._record()
                continue
            failed = self._ask_model()
            if failed is not None:
                return failed

    # The model

    def _visible_tools(self) -> list[ToolSpec]:
        """The tools the model may see: in a read-only run, only the read-only ones."""
        return [
            ToolSpec(id=tool.id, description=tool.description, input_schema=tool.input_schema)
            for tool in self.tools.values()
            if tool is not None and (tool.is_read_only or not self.run.read_only)
        ]

    def _ask_model(self) -> Failed | None:
        views = self.views.update(self.messages)
        step = 1 + views.model_answers
        if step > _setting("KINDGI_MAX_MODEL_STEPS", 25):
            return Failed(
                message=f"model-step-limit: the model asked for tools {step - 1} times without answering"
            )
        try:
            model = resolve_model(self.agent)
        except ModelError as error:
            return Failed(message=error.message)
        request = model_request(
            instructions=self.agent.instructions,
            messages=self.messages,
            tools=self._visible_tools(),
            views=views,
        )
        attempts = _setting("KINDGI_MODEL_ATTEMPTS", 3)
        for attempt in range(1, attempts + 1):
            started = time.perf_counter()
            try:
                reply = model.respond(request)
            except Exception as error:
                retryable = isinstance(error, ModelError) and error.retryable
                message = (
                    error.message if isinstance(error, ModelError) else f"{type(error).__name__}: {error}"
                )
                entry = _model_called(
                    model.model_name, step, attempt, started, error=message, retryable=retryable
                )
                self._record(entry)
                if retryable and attempt < attempts:
                    time.sleep(_setting("KINDGI_MODEL_RETRY_DELAY_SECONDS", 0.5) * attempt)
                    continue
                return Failed(message=f"model-error: {message}")
            break
        used_ids = set(views.call_ids)
        calls = []
        for call in reply.tool_calls:
            call_id = call.id if call.id not in used_ids else f"{call.id}-{step}"
            used_ids.add(call_id)
            calls.append({"id": call_id, "toolId": call.tool_id, "arguments": without_nul(call.arguments)})
        text = without_nul(reply.text)  # what a model says must be storable, whatever it says
        self.messages.append(assistant_message(text, calls))
        self._messages_unsaved = True
        self._unrecorded.append(
            _model_called(
                model.model_name,
                step,
                attempt,
                started,
                text=text,
                toolCalls=calls,
                usage=reply.usage.to_dict(),
            )
        )
        return None

    # Tool calls

    def _gate(self, tool: ToolDefinition, arguments: Any, approved: set[str]) -> GateDecision:
        facts = CallFacts(
            tool_id=tool.id,
            agent_id=self.agent.id,
            read_only=tool.is_read_only,
            effects=tuple((effect.kind.value, effect.resource) for effect in tool.effects),
            arguments=arguments if isinstance(arguments, Mapping) else {},
        )
        return decide_gate(
            call=facts,
            read_only_run=self.run.read_only,
            gates_enabled=self.agent.gates_enabled,
            overrides=self.overrides,
            rules=self.rules,
            approved_tools=approved,
        )

    def _traits(self, call: Mapping[str, Any], approved: set[str]) -> CallTraits:
        tool = self.tools.get(call["toolId"])
        if tool is None:
            return CallTraits(read_only=False)
        return CallTraits(
            read_only=tool.is_read_only,
            may_wait=tool.may_wait,
            sequential=tool.execution == "sequential",
            guarded=any(g.applies_to(tool.id) for g in self.agent.guardrails),
            needs_approval=self._gate(tool, call.get("arguments"), approved).gate == Gate.ASK,
        )

    def _run_calls(self, pending: list[Mapping[str, Any]]) -> list[dict[str, Any]] | Outcome:
        step_ids = {call["id"] for call in pending}
        approved = self.approved_earlier | {
            r["toolId"]
            for cid, r in self.resolutions.items()
            if cid not in step_ids and r.get("decision") == "approve"
        }
        batches = plan_batches(
            [self._traits(call, approved) for call in pending], parallel=self.agent.parallel_tool_calls
        )
        for batch in batches:
            ready: list[ReadyCall] = []
            stop: Outcome | None = None
            for index in batch:
                call = pending[index]
                if call["id"] in self.results:
                    continue
                prepared = self._prepare(call, pending[:index], approved)
                if isinstance(prepared, ReadyCall):
                    ready.append(prepared)
                elif prepared is not None:
                    stop = prepared
                    break
            if ready:
                self._execute(ready)
            if stop is not None:
                return stop
        return [self.results[call["id"]] for call in pending]

    def _refuse(
        self, call: Mapping[str, Any], *, reason: str, result: Any, extra: dict | None = None
    ) -> None:
        self.results[call["id"]] = self._message(call["toolId"], call["id"], result)
        self._record(
            Entry(
                kind=JournalKind.TOOL_REFUSED,
                payload={
                    "callId": call["id"],
                    "toolId": call["toolId"],
                    "reason": reason,
                    "result": result,
                    **(extra or {}),
                },
            )
        )

    def _prepare(
        self, call: Mapping[str, Any], earlier: list[Mapping[str, Any]], approved: set[str]
    ) -> ReadyCall | Outcome | None:
        """Decide whether ``call`` runs now. Returns what to run, an outcome that stops the turn,
        or None once the call's result is recorded without running it."""
        tool_id, call_id = call["toolId"], call["id"]
        model_arguments = None
        tool = self.tools.get(tool_id)
        if tool is None:
            self._refuse(
                call,
                reason="not one of the agent's tools",
                result=error_data(
                    TOOL_NOT_ALLOWED,
                    f'"{tool_id}" is not one of this agent\'s tools.',
                    retryable=False,
                    recommended_action="Use only the tools you were given.",
                ),
            )
            return None
        if call_id in self.called and not tool.idempotent:
            # It started and never finished: it may have had its effect. A person decides.
            recovery = self.recoveries.get(call_id)
            if recovery is None:
                return Suspended(waitpoint=interrupted_waitpoint(call_id, tool, call.get("arguments")))
            if recovery.get("decision") != "approve":
                self._refuse(
                    call,
                    reason="interrupted, and a reviewer chose not to repeat it",
                    result=error_data(
                        TOOL_INTERRUPTED,
                        f'The call to "{tool_id}" was interrupted before its result was recorded and was '
                        "not repeated; it may or may not have taken effect.",
                        retryable=False,
                        recommended_action="Check whether it took effect before calling it again.",
                    ),
                )
                return None
        arguments = call.get("arguments")
        validated, invalid = validate_arguments(tool, arguments)
        if invalid is not None:
            self.results[call_id] = self._message(tool_id, call_id, invalid)
            self._record(
                Entry(
                    kind=JournalKind.TOOL_FAILED,
                    payload={"callId": call_id, "toolId": tool_id, "arguments": arguments, "result": invalid},
                )
            )
            return None
        arguments = validated.model_dump(mode="json", by_alias=True)
        decision = self._gate(tool, arguments, approved)
        if decision.gate == Gate.REFUSE:
            self._refuse(
                call,
                reason=decision.reason,
                result=error_data(
                    decision.code,
                    f'Tool "{tool_id}" is not allowed here: {decision.reason}.',
                    retryable=False,
                    recommended_action="Do not call this tool in this run.",
                ),
                extra={"gate": decision.to_dict()},
            )
            return None
        if decision.gate == Gate.ASK:
            resolution = self.resolutions.get(call_id)
            if resolution is None:
                return Suspended(
                    waitpoint={
                        "kind": APPROVAL_WAITPOINT,
                        "callId": call_id,
                        "toolId": tool_id,
                        "toolVersion": tool.version,
                        "arguments": arguments,
                        "gate": decision.to_dict(),
                    }
                )
            if resolution.get("decision") != "approve":
                rationale = resolution.get("rationale", "")
                self._refuse(
                    call,
                    reason="rejected by a reviewer",
                    result={"status": "rejected", "rationale": rationale},
                    extra={"gate": decision.to_dict()},
                )
                return None
            approved.add(tool_id)
            if "arguments" in resolution:
                model_arguments, arguments = arguments, dict(resolution["arguments"])
        for guardrail in self.agent.guardrails:
            if not guardrail.applies_to(tool_id):
                continue
            guarded = GuardedCall(
                call_id=call_id,
                tool_id=tool_id,
                arguments=arguments,
                run_id=str(self.run.pk),
                earlier_results=tuple(self.results[c["id"]] for c in earlier if c["id"] in self.results),
            )
            try:
                judgement = guardrail.judge(guarded)
                allowed, reason = bool(judgement.allowed), judgement.reason
            except Exception as error:  # a guardrail that breaks refuses: fail closed
                allowed, reason = False, f"the guardrail failed ({type(error).__name__})"
            self._record(
                Entry(
                    kind=JournalKind.GUARDRAIL_JUDGED,
                    payload={
                        "callId": call_id,
                        "toolId": tool_id,
                        "guardrail": guardrail.name,
                        "allowed": allowed,
                        "reason": reason,
                    },
                )
            )
            if not allowed:
                self._refuse(
                    call,
                    reason=f"refused by guardrail {guardrail.name}",
                    result=error_data(
                        GUARDRAIL_REFUSED,
                        reason or "A guardrail refused this call.",
                        retryable=False,
                        recommended_action="Change the call as the reason says, or tell the user why not.",
                    ),
                )
                return None
        return ReadyCall(
            call=call, tool=tool, arguments=arguments, gate=decision, model_arguments=model_arguments
        )

    def _execute(self, ready: list[ReadyCall]) -> None:
        self._record(
            *(
                Entry(
                    kind=JournalKind.TOOL_CALLED,
                    payload={
                        "callId": item.call["id"],
                        "toolId": item.tool.id,
                        "toolVersion": item.tool.version,
                        "arguments": item.arguments,
                        "gate": item.gate.to_dict(),
                        **(
                            {"modelArguments": item.model_arguments}
                            if item.model_arguments is not None
                            else {}
                        ),
                    },
                )
                for item in ready
            )
        )
        jobs = [(item.tool, item.arguments, self._context(item.call["id"])) for item in ready]
        if len(jobs) == 1:
            invocations = [invoke(*jobs[0])]
        else:
            with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
                invocations = list(pool.map(lambda job: _invoke_in_thread(*job), jobs))
        entries = []
        for item, invocation in zip(ready, invocations, strict=True):
            call_id = item.call["id"]
            result = invocation.result
            if item.model_arguments is not None:
                result = {"result": result, "note": EDITED_NOTE, "arguments": item.arguments}
            self.results[call_id] = self._message(item.tool.id, call_id, result)
            payload = {"callId": call_id, "toolId": item.tool.id, "result": result}
            if invocation.traceback:
                payload["traceback"] = invocation.traceback
            kind = (
                JournalKind.TOOL_COMPLETED
                if invocation.status == CallStatus.COMPLETED
                else JournalKind.TOOL_FAILED
            )
            entries.append(Entry(kind=kind, duration_ms=invocation.duration_ms, payload=payload))
        self._record(*entries)

    def _context(self, call_id: str) -> ToolContext:
        return ToolContext(
            run_id=str(self.run.pk),
            call_id=call_id,
            idempotency_key=f"{self.run.pk}:{call_id}",
            dry_run=self.run.dry_run,
            read_only=self.run.read_only,
        )


def _effective_overrides(agent: AgentDefinition) -> dict[str, Override]:
    """The agent's overrides by tool id: the code's, replaced by the admin's where an admin set one."""
    names = agent.override_condition_names
    overrides = {
        tool_id: Override(
            gate=gate.value,
            source="agent code",
            when=agent.override_conditions.get(tool_id),
            when_text=f"{names[tool_id]}(arguments)" if tool_id in names else "",
        )
        for tool_id, gate in (agent.gate_overrides or {}).items()
    }
    for tool_id, (gate, condition) in agent_admin_overrides(agent.id, agent.version).items():
        overrides[tool_id] = Override(
            gate=gate,
            source="admin",
            when=parse_condition(condition).holds if condition else None,
            when_text=condition,
        )
    return overrides


def _model_called(model_name: str, step: int, attempt: int, started: float, **fields: Any) -> Entry:
    return Entry(
        kind=JournalKind.MODEL_CALLED,
        duration_ms=round((time.perf_counter() - started) * 1000),
        payload={"model": model_name, "step": step, "attempt": attempt, **fields},
    )


def _invoke_in_thread(tool: ToolDefinition, arguments: Any, context: ToolContext) -> Invocation:
    try:
        with about_run(context.run_id):  # the tool's own log lines, from this thread, name the run
            return invoke(tool, arguments, context)
    finally:
        connections.close_all()  # this thread's own connections, if the tool used the database
