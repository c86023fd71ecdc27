"""Execute a flow run: its nodes in order, each at most once, continuing from the journal."""

from typing import Any

from kindgi import AgentDefinition, FlowDefinition, Registry, ToolContext
from kindgi.flows import FlowNode, NodeKind
from runs import actions
from runs.engine.agent import INTERRUPTED, interrupted_waitpoint
from runs.engine.invocation import CallStatus, invoke
from runs.engine.outcomes import Completed, Entry, Failed, Outcome, Suspended
from runs.engine.templates import TemplateError, resolve_template
from runs.exceptions import RunInputError
from runs.models import JournalKind, Run, RunStatus

DRY_RUN_REFUSAL = (
    'dry-run-effectful-tool: tool "{tool_id}" is not declared read-only (mutating: false), '
    "so it does not run in a dry run"
)
READ_ONLY_RUN_REFUSAL = (
    'read-only-run: tool "{tool_id}" is not read-only, so it does not run in a read-only run'
)


class FlowExecution:
    def __init__(self, run: Run, *, token: str, flow: FlowDefinition, registry: Registry):
        self.run = run
        self.token = token
        self.flow = flow
        self.registry = registry
        journal = list(run.journal.all())
        self.outputs: dict[str, Any] = {
            e.node_id: e.payload["output"] for e in journal if e.kind == JournalKind.NODE_COMPLETED
        }
        self.started_nodes = {e.node_id for e in journal if e.kind == JournalKind.NODE_STARTED}
        self.recoveries = {
            e.payload["waitpoint"]["callId"]: e.payload["resolution"]
            for e in journal
            if e.kind == JournalKind.WAIT_RESUMED
            and (e.payload.get("waitpoint") or {}).get("subjectKind") == INTERRUPTED
        }

    def unrecorded(self) -> tuple[list, None]:
        """A flow records each step as it goes: nothing waits for the run's end."""
        return [], None

    def execute(self) -> Outcome:
        for node in self.flow.nodes:
            if node.id in self.outputs:
                continue  # the journal says it is done: never again
            try:
                node_input = resolve_template(node.input, flow_input=self.run.input, outputs=self.outputs)
            except TemplateError as error:
                return Failed(message=f'node "{node.id}": its input {error}')
            if node.kind == NodeKind.TOOL:
                outcome = self._tool_step(node, node_input)
            else:
                outcome = self._agent_step(node, node_input)
            if not isinstance(outcome, Completed):
                return outcome
            self.outputs[node.id] = outcome.output
        try:
            output = resolve_template(self.flow.output, flow_input=self.run.input, outputs=self.outputs)
        except TemplateError as error:
            return Failed(message=f"flow output: {error}")
        return Completed(output=output)

    def _record(self, *entries: Entry) -> None:
        actions.do_record(self.run.pk, token=self.token, entries=entries)

    def _tool_step(self, node: FlowNode, node_input: Any) -> Outcome:
        tool = self.registry.tool(node.target, node.version)
        if tool is None:
            return Failed(message=f'node "{node.id}": tool {node.target}@{node.version} is not loaded')
        if self.run.dry_run and not tool.is_read_only:
            return Failed(message=DRY_RUN_REFUSAL.format(tool_id=tool.id))
        if self.run.read_only and not tool.is_read_only:
            return Failed(message=READ_ONLY_RUN_REFUSAL.format(tool_id=tool.id))
        if node.id in self.started_nodes and not tool.idempotent:
            # Started before but never recorded as done: it may have had its effect. A person decides.
            recovery = self.recoveries.get(node.id)
            if recovery is None:
                return Suspended(waitpoint=interrupted_waitpoint(node.id, tool, node_input), node_id=node.id)
            if recovery.get("decision") != "approve":
                return Failed(
                    message=f'interrupted-tool-call: node "{node.id}" called tool "{tool.id}", which is not '
                    "idempotent, and stopped before recording its result; a reviewer chose not to repeat it"
                )
        call_id = node.id
        self._record(
            Entry(
                kind=JournalKind.NODE_STARTED,
                node_id=node.id,
                payload={"kind": "tool", "target": tool.id, "input": node_input},
            ),
            Entry(
                kind=JournalKind.TOOL_CALLED,
                node_id=node.id,
                payload={
                    "callId": call_id,
                    "toolId": tool.id,
                    "toolVersion": tool.version,
                    "arguments": node_input,
                },
            ),
        )
        context = ToolContext(
            run_id=str(self.run.pk),
            call_id=call_id,
            idempotency_key=f"{self.run.pk}:{call_id}",
            dry_run=self.run.dry_run,
            read_only=self.run.read_only,
        )
        invocation = invoke(tool, node_input, context)
        if invocation.status == CallStatus.COMPLETED:
            self._record(
                Entry(
                    kind=JournalKind.TOOL_COMPLETED,
                    node_id=node.id,
                    duration_ms=invocation.duration_ms,
                    payload={"callId": call_id, "toolId": tool.id, "result": invocation.result},
                ),
                Entry(
                    kind=JournalKind.NODE_COMPLETED, node_id=node.id, payload={"output": invocation.result}
                ),
            )
            return Completed(output=invocation.result)
        payload = {"callId": call_id, "toolId": tool.id, "result": invocation.result}
        if invocation.traceback:
            payload["traceback"] = invocation.traceback
        self._record(
            Entry(
                kind=JournalKind.TOOL_FAILED,
                node_id=node.id,
                duration_ms=invocation.duration_ms,
                payload=payload,
            )
        )
        error = invocation.result["error"]
        return Failed(
            message=f'tool-failed: node "{node.id}": tool "{tool.id}" returned '
            f"{error['code']}: {error['message']}"
        )

    def _agent_step(self, node: FlowNode, node_input: Any) -> Outcome:
        agent: AgentDefinition | None = self.registry.agent(node.target, node.version)
        if agent is None:
            return Failed(message=f'node "{node.id}": agent {node.target}@{node.version} is not loaded')
        try:
            child_input = actions.validate_run_input(agent, node_input)
        except RunInputError as error:
            return Failed(message=f'node "{node.id}": {error}')
        child = actions.do_get_or_create_child_run(
            parent_id=self.run.pk,
            token=self.token,
            node_id=node.id,
            agent=agent,
            input=child_input,
            entries=[
                Entry(
                    kind=JournalKind.NODE_STARTED,
                    node_id=node.id,
                    payload={"kind": "agent", "target": agent.id, "input": child_input},
                )
            ],
        )
        if child.status == RunStatus.QUEUED:
            from runs.engine.executor import execute

            execute(child.pk)  # an agent step runs inside its flow's execution
            child.refresh_from_db()
        match child.status:
            case RunStatus.COMPLETED:
                output = {"reply": (child.output or {}).get("reply", "")}
                self._record(
                    Entry(kind=JournalKind.NODE_COMPLETED, node_id=node.id, payload={"output": output})
                )
                return Completed(output=output)
            case RunStatus.FAILED | RunStatus.CANCELLED:
                return Failed(
                    message=f'node "{node.id}": agent run {child.pk} {child.status}'
                    + (f": {child.failure_message}" if child.failure_message else "")
                )
            case _:  # suspended, or executing elsewhere: wait for it to finish
                return Suspended(
                    waitpoint={"kind": actions.CHILD_RUN_WAITPOINT, "runId": str(child.pk)}, node_id=node.id
                )
