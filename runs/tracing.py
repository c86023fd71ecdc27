"""A run's spans, as the driver sees its execution: one span per execution (``invoke_agent`` for
an agent turn, ``invoke_workflow`` for a flow), ``chat`` spans around the model's calls,
``execute_tool`` spans for tool calls, and a span per flow step. Names and attributes follow the
OpenTelemetry GenAI semantic conventions; what is Kindgi's own is under ``kindgi.``.

The engine stays free of all this: the model is wrapped where the driver chooses it, and tool
calls and steps are traced from the journal entries the engine hands the recorder (a tool
result carries its duration; the span ends when it is recorded). Each execution continues the
trace the run keeps (``Run.trace_context``), so a run suspended here and resumed in another
process, or by a decision, is one trace. With traces off, ``execution_trace`` gives ``NO_TRACE``,
which does nothing.
"""

import functools
import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from core import tracing
from kindgi import AgentDefinition, ModelReply, ModelRequest
from runs.engine.chat_models import ChatModel
from runs.engine.entries import Entry, EntryKind
from runs.engine.outcomes import Failed, Outcome, Suspended
from runs.journal import do_keep_trace_context

logger = logging.getLogger("kindgi.runs")

# The GenAI conventions' names, spelled once.
OPERATION = "gen_ai.operation.name"
AGENT_ID = "gen_ai.agent.id"
AGENT_NAME = "gen_ai.agent.name"
AGENT_VERSION = "gen_ai.agent.version"
WORKFLOW_NAME = "gen_ai.workflow.name"
CONVERSATION_ID = "gen_ai.conversation.id"
PROVIDER_NAME = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
SERVER_ADDRESS = "server.address"
SERVER_PORT = "server.port"

# Model strings' prefixes (pydantic-ai's) as the conventions name their providers.
PROVIDERS = {
    "openai": "openai",
    "openai-compatible": "openai",  # a server that speaks OpenAI's protocol; server.address says which
    "anthropic": "anthropic",
    "groq": "groq",
    "mistral": "mistral_ai",
    "google-gla": "gcp.gemini",
    "google-vertex": "gcp.vertex_ai",
    "bedrock": "aws.bedrock",
    "cohere": "cohere",
    "deepseek": "deepseek",
    "grok": "x_ai",
    "scripted": "kindgi.scripted",
}


def execution_trace(run, *, continued: bool):
    """The spans of one execution of ``run`` (``continued``: it goes on from an earlier one, a
    resume or a takeover), or ``NO_TRACE`` with traces off, or if they cannot be made."""
    if not tracing.enabled():
        return NO_TRACE
    try:
        return ExecutionTrace(run, continued=continued)
    except Exception:
        logger.exception("run %s: its spans could not be made; it executes untraced", run.pk)
        return NO_TRACE


def _never_fails(hook):
    """A trace's hook that logs what goes wrong in it: a trace that fails fails no run."""

    @functools.wraps(hook)
    def guarded(self, *args, **kwargs):
        try:
            return hook(self, *args, **kwargs)
        except Exception:
            logger.exception("run %s: a span was lost", self.run.pk)

    return guarded


class NoTrace:
    """Traces off: every hook is free."""

    @contextmanager
    def running(self) -> Iterator[None]:
        yield

    def chat_models(
        self, choose: Callable[[AgentDefinition], ChatModel]
    ) -> Callable[[AgentDefinition], ChatModel]:
        return choose

    def recorded(self, entries: Sequence[Entry]) -> None:
        pass

    @contextmanager
    def agent_step(self, node_id: str, agent: AgentDefinition) -> Iterator[None]:
        yield

    def ended(self, outcome: Outcome | None, run=None) -> None:
        pass

    def lost(self, why: str) -> None:
        pass


NO_TRACE = NoTrace()


class ExecutionTrace(NoTrace):
    def __init__(self, run, *, continued: bool):
        self.run = run
        kept = tracing.context_of(run.trace_context)
        if run.is_agent_turn:
            name = f"invoke_agent {run.agent_key}"
            attributes = {
                OPERATION: "invoke_agent",
                AGENT_NAME: run.agent_key,
                AGENT_ID: f"{run.agent_key}@{run.agent_version}",
                AGENT_VERSION: run.agent_version,
                CONVERSATION_ID: str(run.conversation_id) if run.conversation_id else None,
            }
        else:
            name = f"invoke_workflow {run.flow_key}"
            attributes = {
                OPERATION: "invoke_workflow",
                WORKFLOW_NAME: run.flow_key,
                "kindgi.flow.version": run.flow_version,
            }
        attributes |= {
            "kindgi.run.id": str(run.pk),
            "kindgi.tenant": run.tenant.slug if type(run).tenant.is_cached(run) else None,
            "kindgi.run.trigger": run.trigger,
            "kindgi.run.continued": continued,
            "kindgi.run.dry_run": run.dry_run or None,
        }
        # Within the run's kept trace; one that has none yet starts it here (within whatever is
        # current: a request, or nothing), and keeps it.
        self.span = tracing.tracer().start_span(
            name,
            context=kept,
            kind=SpanKind.INTERNAL,
            links=tracing.links_here(kept) if kept is not None else [],
        )
        tracing.set_attributes(self.span, attributes)
        if tracing.capture_content() and run.is_agent_turn and not continued:
            message = run.input.get("userMessage")
            if message:
                self.span.set_attribute(INPUT_MESSAGES, tracing.content([_text_message("user", message)]))
        if kept is None:
            run.trace_context = tracing.traceparent_of(self.span)
            do_keep_trace_context(run.pk, run.trace_context)
        self._called: dict[str, dict[str, Any]] = {}  # tool.called payloads, by call id
        self._steps: dict[str, trace.Span] = {}  # a flow's open steps, by node id
        self._ended = False

    def _context(self, node_id: str = "") -> otel_context.Context:
        return trace.set_span_in_context(self._steps.get(node_id) or self.span)

    @contextmanager
    def running(self) -> Iterator[None]:
        """The execution's span is current while the engine runs: a model's ``chat`` span, and
        a run made meanwhile (a flow's agent step), are within it."""
        token = otel_context.attach(trace.set_span_in_context(self.span))
        try:
            yield
        finally:
            otel_context.detach(token)

    def chat_models(
        self, choose: Callable[[AgentDefinition], ChatModel]
    ) -> Callable[[AgentDefinition], ChatModel]:
        def choose_traced(agent: AgentDefinition) -> ChatModel:
            model = choose(agent)
            provider, name, server = model_parts(model.model_name)
            tracing.set_attributes(self.span, {PROVIDER_NAME: provider, REQUEST_MODEL: name})
            return TracedChatModel(model, provider=provider, name=name, server=server)

        return choose_traced

    @_never_fails
    def recorded(self, entries: Sequence[Entry]) -> None:
        now = time.time_ns()
        # A call whose intent is written with its result began its duration ago; a flow step
        # began when its call did.
        began = {
            (entry.payload or {}).get("callId"): now - (entry.duration_ms or 0) * 1_000_000
            for entry in entries
            if entry.kind in (EntryKind.TOOL_COMPLETED, EntryKind.TOOL_FAILED)
        }
        for entry in entries:
            payload = entry.payload or {}
            match entry.kind:
                case EntryKind.NODE_STARTED:
                    # A tool step's call has the step's id.
                    self._step_started(entry.node_id, payload, start=min(now, began.get(entry.node_id, now)))
                case EntryKind.TOOL_CALLED:
                    self._called[payload["callId"]] = payload
                case EntryKind.TOOL_COMPLETED | EntryKind.TOOL_FAILED:
                    self._tool_span(entry, start=began.get(payload.get("callId"), now), end=now)
                case EntryKind.TOOL_REFUSED:
                    self._tool_span(entry, start=now, end=now)
                case EntryKind.NODE_COMPLETED:
                    step = self._steps.pop(entry.node_id, None)
                    if step is not None:
                        step.end(end_time=now)
                case EntryKind.GUARDRAIL_JUDGED:
                    self.span.add_event(
                        "kindgi.guardrail.judged",
                        {
                            "kindgi.guardrail.name": str(payload.get("guardrail", "")),
                            "kindgi.guardrail.allowed": bool(payload.get("allowed")),
                            TOOL_CALL_ID: str(payload.get("callId", "")),
                        },
                    )

    def _step_started(self, node_id: str, payload: dict[str, Any], *, start: int) -> trace.Span:
        step = tracing.tracer().start_span(
            f"kindgi.flow.step {node_id}", context=trace.set_span_in_context(self.span), start_time=start
        )
        tracing.set_attributes(
            step,
            {
                "kindgi.flow.step.id": node_id,
                "kindgi.flow.step.kind": payload.get("kind"),
                "kindgi.flow.step.target": payload.get("target"),
            },
        )
        if tracing.capture_content() and "input" in payload:
            step.set_attribute("kindgi.flow.step.input", tracing.content(payload["input"]))
        self._steps[node_id] = step
        return step

    def _tool_span(self, entry: Entry, *, start: int, end: int) -> None:
        payload = entry.payload or {}
        call_id = payload.get("callId", "")
        called = self._called.pop(call_id, {})
        tool_id = payload.get("toolId", "")
        span = tracing.tracer().start_span(
            f"execute_tool {tool_id}",
            context=self._context(entry.node_id),
            kind=SpanKind.INTERNAL,
            start_time=start,
        )
        gate = called.get("gate") or payload.get("gate") or {}
        tracing.set_attributes(
            span,
            {
                OPERATION: "execute_tool",
                TOOL_NAME: tool_id,
                TOOL_CALL_ID: call_id,
                TOOL_TYPE: "function",
                "kindgi.tool.version": called.get("toolVersion"),
                "kindgi.gate": gate.get("gate"),
                "kindgi.gate.rule_id": gate.get("ruleId"),
                "kindgi.call.connection.app": (called.get("connection") or {}).get("app"),
            },
        )
        if tracing.capture_content():
            # A gate's reason is a sentence that may quote the call (a budget's amounts) or name
            # people (a grant's owner): content.
            tracing.set_attributes(span, {"kindgi.gate.reason": gate.get("reason")})
        result = payload.get("result")
        error = result.get("error") if isinstance(result, dict) else None
        if entry.kind == EntryKind.TOOL_REFUSED:
            # Refused by the call policy (a rule, a guardrail, a reviewer's rejection): never ran.
            span.set_attribute("kindgi.call.refused", True)
            # The code of the error the model is told, or what a reviewer's answer was.
            answer = result.get("status") if isinstance(result, dict) else None
            refused_as = _error_code(error) or str(answer or "refused")
            span.set_attribute(ERROR_TYPE, refused_as)
            said: dict[str, Any] = {ERROR_TYPE: refused_as}
            if tracing.capture_content():
                # Why, in words: a rule's or a guardrail's reason, which may quote the call.
                said["kindgi.call.refusal_reason"] = str(payload.get("reason", ""))
                span.set_attribute("kindgi.call.refusal_reason", said["kindgi.call.refusal_reason"])
            span.add_event("kindgi.call.refused", said)
            span.set_status(Status(StatusCode.ERROR, refused_as))
        elif entry.kind == EntryKind.TOOL_FAILED:
            span.set_attribute(ERROR_TYPE, _error_code(error) or "_OTHER")
            span.set_status(Status(StatusCode.ERROR, _error_code(error) or "tool failed"))
        if tracing.capture_content():
            arguments = called.get("arguments", payload.get("arguments"))
            if arguments is not None:
                span.set_attribute(TOOL_ARGUMENTS, tracing.content(arguments))
            if result is not None:
                span.set_attribute(TOOL_RESULT, tracing.content(result))
        span.end(end_time=max(start, end))

    @contextmanager
    def agent_step(self, node_id: str, agent: AgentDefinition) -> Iterator[None]:
        """A flow's agent step: its span is current while its child run is made (which keeps
        it as the trace it continues) and executed here."""
        step = self._steps.get(node_id) or self._step_started(
            node_id, {"kind": "agent", "target": agent.id}, start=time.time_ns()
        )
        token = otel_context.attach(trace.set_span_in_context(step))
        try:
            yield
        finally:
            otel_context.detach(token)

    @_never_fails
    def ended(self, outcome: Outcome | None, run=None) -> None:
        """The execution is over: ``run`` as it now stands, after ``outcome``."""
        if self._ended:
            return
        self._ended = True
        status = getattr(run, "status", None)
        tracing.set_attributes(self.span, {"kindgi.run.status": str(status) if status else None})
        if isinstance(outcome, Suspended):
            waitpoint = outcome.waitpoint
            self.span.add_event(
                "kindgi.run.suspended",
                {
                    name: value
                    for name, value in {
                        "kindgi.waitpoint.kind": waitpoint.get("kind"),
                        "kindgi.approval.subject_kind": waitpoint.get("subjectKind"),
                        TOOL_NAME: waitpoint.get("toolId"),
                        TOOL_CALL_ID: waitpoint.get("callId"),
                    }.items()
                    if value
                },
            )
        elif isinstance(outcome, Failed):
            # The failure's code ("model-error", "internal-error"…); its message, which may quote
            # a provider's answer, a tool's error or the input, is content.
            code = outcome.message.partition(":")[0]
            code = code if _CODE.fullmatch(code) else "_OTHER"
            self.span.set_attribute(ERROR_TYPE, code)
            described = outcome.message[: tracing.CONTENT_LIMIT] if tracing.capture_content() else code
            self.span.set_status(Status(StatusCode.ERROR, described))
        elif run is not None and tracing.capture_content() and self.run.is_agent_turn:
            reply = (getattr(run, "output", None) or {}).get("reply")
            if reply:
                self.span.set_attribute(OUTPUT_MESSAGES, tracing.content([_text_message("assistant", reply)]))
        self._close()

    @_never_fails
    def lost(self, why: str) -> None:
        """The execution stopped without ending the run (its claim lost, its database gone)."""
        if not self._ended:
            self._ended = True
            self.span.add_event("kindgi.run.left", {"kindgi.reason": why})
            self._close()

    def _close(self) -> None:
        now = time.time_ns()
        for step in self._steps.values():
            step.end(end_time=now)  # a step the run waits in, or failed at
        self._steps.clear()
        self.span.end(end_time=now)


class TracedChatModel:
    """A chat model whose every call is a ``chat {model}`` span, with its token usage."""

    def __init__(self, model: ChatModel, *, provider: str, name: str, server: tuple[str, int | None] | None):
        self.model = model
        self.model_name = model.model_name
        self.features = model.features
        self.provider, self.name, self.server = provider, name, server

    def respond(self, request: ModelRequest) -> ModelReply:
        attributes: dict[str, Any] = {
            OPERATION: "chat",
            PROVIDER_NAME: self.provider,
            REQUEST_MODEL: self.name,
        }
        if self.server is not None:
            attributes[SERVER_ADDRESS], attributes[SERVER_PORT] = self.server
        # A failure is recorded on the span as the error's type and an error status (not the
        # exception, whose text may quote the request) and goes on up to the turn, which
        # journals it and may ask again: each attempt a span.
        with tracing.tracer().start_as_current_span(
            f"chat {self.name}", kind=SpanKind.CLIENT, record_exception=False, set_status_on_exception=False
        ) as span:
            tracing.set_attributes(span, attributes)
            if tracing.capture_content():
                tracing.set_attributes(
                    span,
                    {
                        SYSTEM_INSTRUCTIONS: tracing.content(
                            [{"type": "text", "content": request.instructions}]
                        )
                        if request.instructions
                        else None,
                        INPUT_MESSAGES: tracing.content([_message(message) for message in request.messages]),
                    },
                )
            try:
                reply = self.model.respond(request)
            except Exception as error:
                span.set_attribute(ERROR_TYPE, type(error).__qualname__)
                span.set_status(Status(StatusCode.ERROR, type(error).__qualname__))
                raise
            finish = "tool_call" if reply.tool_calls else "stop"
            span.set_attributes(
                {
                    INPUT_TOKENS: reply.usage.input_tokens,
                    OUTPUT_TOKENS: reply.usage.output_tokens,
                    FINISH_REASONS: (finish,),
                }
            )
            if tracing.capture_content():
                parts: list[dict[str, Any]] = [{"type": "text", "content": reply.text}] if reply.text else []
                parts += [
                    {"type": "tool_call", "id": call.id, "name": call.tool_id, "arguments": call.arguments}
                    for call in reply.tool_calls
                ]
                output = [{"role": "assistant", "parts": parts, "finish_reason": finish}]
                span.set_attribute(OUTPUT_MESSAGES, tracing.content(output))
            return reply


def model_parts(model_string: str) -> tuple[str, str, tuple[str, int | None] | None]:
    """A model string's provider (as the conventions name it), model, and server (for a server
    of its own, ``openai-compatible:<model>@<url>``)."""
    from urllib.parse import urlsplit

    kind, _, rest = model_string.partition(":")
    if not rest:
        return "_OTHER", model_string, None
    server = None
    if kind == "openai-compatible":
        rest, _, url = rest.partition("@")
        where = urlsplit(url)
        server = (where.hostname, where.port) if where.hostname else None
    return PROVIDERS.get(kind, kind), rest, server


def _text_message(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _message(message: dict[str, Any]) -> dict[str, Any]:
    """A conversation message as the conventions' ``gen_ai.input.messages`` items have it."""
    role = message.get("role", "")
    if role == "tool":
        part = {"type": "tool_call_response", "id": message.get("callId"), "response": message.get("content")}
        return {"role": "tool", "parts": [part]}
    parts: list[dict[str, Any]] = (
        [{"type": "text", "content": message["content"]}] if message.get("content") else []
    )
    parts += [
        {
            "type": "tool_call",
            "id": call.get("id"),
            "name": call.get("toolId"),
            "arguments": call.get("arguments"),
        }
        for call in message.get("toolCalls", [])
    ]
    return {"role": role, "parts": parts}


# What a failure's message starts with when it names its kind: "model-error: …".
_CODE = re.compile(r"[a-z][a-z0-9-]{0,63}")


def _error_code(error: Any) -> str | None:
    return str(error.get("code")) if isinstance(error, dict) and error.get("code") else None
