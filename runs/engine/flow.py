"""A flow run: its nodes in order, each at most once, continuing from the journal.

A tool step's call goes through the call policy like an agent's (with no agent gate: the
tenant's rules gate it); a refusal fails the flow, an ask suspends it on an approval. An
agent step runs as a child run, which the recorder makes and executes.
"""

from dataclasses import replace
from typing import Any

from kindgi import FlowDefinition, Registry, ToolContext
from kindgi.flows import FlowNode, NodeKind
from runs.engine.entries import Entry, EntryKind
from runs.engine.inputs import validate_run_input
from runs.engine.invocation import CallStatus, invoke
from runs.engine.outcomes import Completed, Failed, Outcome, Suspended
from runs.engine.policy import PolicyContext, ProposedCall, Ready, Refused, Stop, prepare, proposed
from runs.engine.recorder import CHILD_COMPLETED, CHILD_ENDED_BADLY, Recorder
from runs.engine.state import RunState
from runs.engine.templates import TemplateError, resolve_template
from runs.engine.turn import called_entry, refusal_entry, result_entry
from runs.engine.waitpoints import child_run_waitpoint
from runs.exceptions import RunInputError


class FlowRun:
    def __init__(
        self,
        *,
        flow: FlowDefinition,
        registry: Registry,
        state: RunState,
        ctx: PolicyContext,
        recorder: Recorder,
    ):
        self.flow = flow
        self.registry = registry
        self.state = state
        self.ctx = ctx
        self.run = ctx.run
        self.recorder = recorder

    def unrecorded(self) -> tuple[list, None]:
        """A flow records each step as it goes: nothing waits for the run's end."""
        return [], None

    def _record(self, *entries: Entry) -> None:
        self.recorder.record(entries)
        for entry in entries:
            self.state.apply(entry.kind, entry.node_id, entry.payload or {})

    def execute(self) -> Outcome:
        outputs = self.state.node_outputs
        for node in self.flow.nodes:
            if node.id in outputs:
                continue  # the journal says it is done: never again
            try:
                node_input = resolve_template(node.input, flow_input=self.run.input, outputs=outputs)
            except TemplateError as error:
                return Failed(message=f'node "{node.id}": its input {error}')
            step = self._tool_step if node.kind == NodeKind.TOOL else self._agent_step
            outcome = step(node, node_input)
            if not isinstance(outcome, Completed):
                return outcome
        try:
            output = resolve_template(self.flow.output, flow_input=self.run.input, outputs=outputs)
        except TemplateError as error:
            return Failed(message=f"flow output: {error}")
        return Completed(output=output)

    def _tool_step(self, node: FlowNode, node_input: Any) -> Outcome:
        # A tool a person approved at an earlier step of this run counts for ask-once rules.
        approved = self.state.approved_tools(leaving_out={node.id})
        ctx = replace(step_context(self.ctx, node, self.registry), approved_tools=approved)
        call = proposed(
            call_id=node.id, tool_id=node.target, arguments=node_input, node_id=node.id, state=self.state
        )
        verdict = prepare(call, self.state, ctx)
        if isinstance(verdict, Refused):
            self._record(refusal_entry(verdict))
            return Failed(message=verdict.failure)
        if isinstance(verdict, Stop):
            return Failed(message=verdict.message)
        if not isinstance(verdict, Ready):
            first = self.state.first_wait(verdict.waitpoint)
            return Suspended(waitpoint=verdict.waitpoint, node_id=node.id, first=first)
        return self._call(node, verdict.call)

    def _call(self, node: FlowNode, call: ProposedCall) -> Outcome:
        started = Entry(
            kind=EntryKind.NODE_STARTED,
            node_id=node.id,
            payload={"kind": "tool", "target": call.tool.id, "input": call.arguments},
        )
        intent = [started, called_entry(call)]
        if not call.tool.is_safe_to_repeat:
            self._record(*intent)
            intent = []  # written: the call runs only once its intent is durable
        context = ToolContext(
            run_id=self.run.id,
            call_id=call.call_id,
            tenant_id=self.run.tenant_id,
            tenant_slug=self.run.tenant_slug,
            idempotency_key=f"{self.run.id}:{call.call_id}",
            dry_run=self.run.dry_run,
            read_only=self.run.read_only,
            connection=call.connection,
        )
        invocation = invoke(call.tool, call.validated, context, limits=self.ctx.limits)
        result = result_entry(call, invocation, for_a_model=False)
        if invocation.status == CallStatus.COMPLETED:
            output = invocation.result
            self._record(
                *intent,
                result,
                Entry(kind=EntryKind.NODE_COMPLETED, node_id=node.id, payload={"output": output}),
            )
            return Completed(output=output)
        self._record(*intent, result)
        error = invocation.result["error"]
        returned = f"{error['code']}: {error['message']}"
        return Failed(message=f'tool-failed: node "{node.id}": tool "{call.tool.id}" returned {returned}')

    def _agent_step(self, node: FlowNode, node_input: Any) -> Outcome:
        agent = self.registry.agent(node.target, node.version)
        if agent is None:
            return Failed(message=f'node "{node.id}": agent {node.target}@{node.version} is not loaded')
        try:
            child_input = validate_run_input(agent, node_input)
        except RunInputError as error:
            return Failed(message=f'node "{node.id}": {error}')
        started = Entry(
            kind=EntryKind.NODE_STARTED,
            node_id=node.id,
            payload={"kind": "agent", "target": agent.id, "input": child_input},
        )
        child = self.recorder.run_child(node_id=node.id, agent=agent, input=child_input, entries=[started])
        if child.status == CHILD_COMPLETED:
            output = {"reply": (child.output or {}).get("reply", "")}
            self._record(Entry(kind=EntryKind.NODE_COMPLETED, node_id=node.id, payload={"output": output}))
            return Completed(output=output)
        if child.status in CHILD_ENDED_BADLY:
            because = f": {child.failure_message}" if child.failure_message else ""
            return Failed(message=f'node "{node.id}": agent run {child.id} {child.status}{because}')
        # Suspended, or executing elsewhere: wait for it to finish.
        return Suspended(waitpoint=child_run_waitpoint(child.id), node_id=node.id)


def step_context(ctx: PolicyContext, node: FlowNode, registry: Registry) -> PolicyContext:
    """A tool step's context: its one tool, the tenant's rules, and no agent gate."""
    # A pack's tool is in the registry; an MCP server's, among those the driver found for the run.
    tools = {node.target: registry.tool(node.target, node.version) or ctx.tools.get(node.target)}
    run_tools = ctx.run_tools or ctx.tools  # the flow's, for what its earlier steps touched
    return replace(ctx, tools=tools, run_tools=run_tools, agent_id="", agent_gates=None, guardrails=())
