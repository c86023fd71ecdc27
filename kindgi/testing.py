"""Test a pack with pytest: its agents and flows run through Kindgi's own engine, in memory.

    from kindgi.testing import PackTester
    from my_pack import pack

    def test_the_assistant_asks_before_it_writes():
        run = PackTester(pack).run_agent("my-pack.assistant", "Rename ord_1 to Gift")
        assert run.status == "waiting"
        assert run.waiting_for.tool_id == "my-pack.rename-order"
        assert run.approve().status == "completed"

Every call goes through the same call policy as on a server (gates, guardrails, dry and
read-only runs, retrieval, the journal a run resumes from); what a test cannot have here is a
database: no tenant rules, admin overrides, connections or MCP servers. Approving or rejecting
a waiting call resumes the run from its journal, as a reviewer's decision does.
"""

import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from kindgi.agents import AgentDefinition
from kindgi.errors import KindgiError
from kindgi.flows import FlowDefinition
from kindgi.packs import Pack
from kindgi.registry import Registry, build_registry


def _choose_model(agent: AgentDefinition):
    """The agent's model: its scripted model, as the engine has it with no site; a provider's
    (a model name) as a Kindgi site reaches it, with the site's settings or their defaults."""
    from kindgi.models import ScriptedModel
    from runs.engine.chat_models import scripted_model

    if isinstance(agent.model, ScriptedModel):
        return scripted_model(agent)
    import os

    from django.conf import settings

    if not settings.configured and not os.environ.get("DJANGO_SETTINGS_MODULE"):
        settings.configure()  # a site's settings, when there is a site, are read as they are
    from runs.model_resolution import resolve_model

    return resolve_model(agent)


class NotWaiting(KindgiError):
    """``approve`` or ``reject`` on a run that waits for nothing."""


@dataclass(frozen=True, kw_only=True)
class WaitingCall:
    """The call a run waits on a person for."""

    call_id: str
    tool_id: str
    arguments: Mapping[str, Any]
    reason: str
    waitpoint: Mapping[str, Any]


@dataclass
class PackRun:
    """One run in memory: where it stands, and its journal."""

    tester: "PackTester"
    target: AgentDefinition | FlowDefinition
    input: dict[str, Any]
    dry_run: bool = False
    read_only: bool = False
    id: str = field(default_factory=lambda: str(uuid.uuid4()))
    status: str = "queued"
    output: Any = None
    failure_message: str = ""
    journal: list[Any] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    waitpoint: dict[str, Any] | None = None
    # An agent step's run, for a flow waiting on one.
    child: "PackRun | None" = None
    parent: "PackRun | None" = None

    # What a test reads

    @property
    def reply(self) -> str:
        """An agent's answer, once it completed."""
        return (self.output or {}).get("reply", "") if self.status == "completed" else ""

    @property
    def waiting_for(self) -> WaitingCall | None:
        """The call that waits for a person's decision (in an agent step's run, for a flow)."""
        if self.status != "waiting":
            return None
        if self.child is not None and self.child.status == "waiting":
            return self.child.waiting_for
        waitpoint = self.waitpoint or {}
        return WaitingCall(
            call_id=waitpoint.get("callId", ""),
            tool_id=waitpoint.get("toolId", ""),
            arguments=waitpoint.get("arguments", {}),
            reason=(waitpoint.get("gate") or {}).get("reason", ""),
            waitpoint=waitpoint,
        )

    def entries(self, kind: str) -> list[dict[str, Any]]:
        """The payloads of the journal's entries of ``kind`` (``tool.called``, ``tool.completed``…)."""
        return [entry.payload for entry in self.journal if entry.kind == kind]

    @property
    def tools_called(self) -> list[str]:
        """The tools that ran, in the order they started."""
        return [payload["toolId"] for payload in self.entries("tool.called")]

    # A person's decision

    def approve(self, *, arguments: Mapping[str, Any] | None = None, rationale: str = "") -> "PackRun":
        """Approve the waiting call (with edited ``arguments``, if given) and go on."""
        return self._decide("approve", rationale, arguments)

    def reject(self, rationale: str = "not now") -> "PackRun":
        """Reject the waiting call and go on: the model reads why, a flow fails."""
        return self._decide("reject", rationale, None)

    def _decide(self, decision: str, rationale: str, arguments: Mapping[str, Any] | None) -> "PackRun":
        if self.child is not None and self.child.status == "waiting":
            self.child._decide(decision, rationale, arguments)
            return self
        if self.status != "waiting":
            raise NotWaiting(f"the run is {self.status}: there is nothing to decide")
        from runs.engine.waitpoints import call_digest

        waitpoint = dict(self.waitpoint or {})
        resolution: dict[str, Any] = {"decision": decision, "rationale": rationale, "reviewer": "a test"}
        shown = arguments if arguments is not None else waitpoint.get("arguments", {})
        resolution["digest"] = call_digest(waitpoint["toolId"], waitpoint["toolVersion"], shown)
        if arguments is not None:
            resolution["arguments"] = dict(arguments)
        self._resume(resolution)
        return self

    def _resume(self, resolution: Mapping[str, Any]) -> None:
        from runs.engine.entries import Entry, EntryKind

        waitpoint = self.waitpoint or {}
        self._append(
            [
                Entry(
                    kind=EntryKind.WAIT_RESUMED,
                    node_id=waitpoint.get("nodeId", ""),
                    payload={"waitpoint": waitpoint, "resolution": dict(resolution)},
                )
            ]
        )
        self.status, self.waitpoint = "queued", None
        self.tester._execute(self)
        if self.parent is not None and self.status != "waiting":
            self.parent._resume({"childStatus": self.status})

    def _append(self, entries: Iterable[Any]) -> None:
        self.journal.extend(entries)


class _MemoryRecorder:
    def __init__(self, tester: "PackTester", run: PackRun):
        self.tester, self.run = tester, run

    def record(self, entries: Sequence[Any], *, messages_json: str | None = None) -> None:
        self.run._append(entries)
        if messages_json is not None:
            self.run.messages = json.loads(messages_json)

    def run_child(
        self, *, node_id: str, agent: AgentDefinition, input: dict[str, Any], entries: Sequence[Any]
    ):
        from runs.engine.recorder import ChildRun

        self.run._append(entries)
        child = self.run.child
        if child is None or child.input != input:
            child = PackRun(tester=self.tester, target=agent, input=input, dry_run=self.run.dry_run)
            child.read_only, child.parent = self.run.read_only, self.run
            self.run.child = child
            self.tester._execute(child)
        return ChildRun(
            id=child.id,
            status=_CHILD_STATUS.get(child.status, child.status),
            output=child.output,
            failure_message=child.failure_message,
        )

    def thread_finished(self) -> None:
        pass


# The engine's words for a child run's state, where they differ from a test's.
_CHILD_STATUS = {"waiting": "suspended"}


class PackTester:
    """Run a pack's agents and flows in memory. ``packs``: the pack under test and any it uses."""

    def __init__(self, *packs: Pack):
        self.registry: Registry = build_registry(packs)

    def run_agent(
        self,
        agent_id: str,
        message: str,
        *,
        parameters: Mapping[str, Any] | None = None,
        dry_run: bool = False,
        read_only: bool = False,
    ) -> PackRun:
        """One turn of the agent, as far as it goes: completed, failed, or waiting for a person."""
        agent = self.registry.agent(agent_id)
        if agent is None:
            raise KindgiError(f"no agent {agent_id!r} in the packs under test")
        data = {"userMessage": message, **(parameters or {})}
        return self._start(agent, data, dry_run=dry_run, read_only=read_only)

    def run_flow(
        self, flow_id: str, input: Mapping[str, Any], *, dry_run: bool = False, read_only: bool = False
    ) -> PackRun:
        """A run of the flow, as far as it goes."""
        flow = self.registry.flow(flow_id)
        if flow is None:
            raise KindgiError(f"no flow {flow_id!r} in the packs under test")
        return self._start(flow, dict(input), dry_run=dry_run, read_only=read_only)

    def _start(self, target, data: dict[str, Any], *, dry_run: bool, read_only: bool) -> PackRun:
        from runs.engine.inputs import validate_run_input

        run = PackRun(
            tester=self,
            target=target,
            input=validate_run_input(target, data),
            dry_run=dry_run,
            read_only=read_only,
        )
        self._execute(run)
        return run

    def _execute(self, run: PackRun) -> None:
        from runs.engine.flow import FlowRun
        from runs.engine.gates import AgentGates, code_overrides
        from runs.engine.outcomes import Completed, Failed, Suspended
        from runs.engine.policy import PolicyContext
        from runs.engine.state import RunFacts, RunState
        from runs.engine.turn import AgentTurn

        facts = RunFacts(
            id=run.id, dry_run=run.dry_run, read_only=run.read_only, input=run.input, messages=run.messages
        )
        state = RunState.fold(run.journal)
        recorder = _MemoryRecorder(self, run)
        target = run.target
        if isinstance(target, AgentDefinition):
            ctx = PolicyContext(
                run=facts,
                tools={ref.id: self.registry.tool(ref.id, ref.version) for ref in target.tools},
                retrieval={ref.id: self.registry.tool(ref.id, ref.version) for ref in target.retrieval},
                agent_id=target.id,
                agent_gates=AgentGates(enabled=target.gates_enabled, overrides=code_overrides(target)),
                guardrails=target.guardrails,
            )
            engine: Any = AgentTurn(
                agent=target, state=state, ctx=ctx, recorder=recorder, choose_model=_choose_model
            )
        else:
            engine = FlowRun(
                flow=target,
                registry=self.registry,
                state=state,
                ctx=PolicyContext(run=facts, tools={}),
                recorder=recorder,
            )
        run.status = "running"
        outcome = engine.execute()
        entries, messages = engine.unrecorded()
        run._append(entries)
        if messages is not None:
            run.messages = [dict(message) for message in messages]
        match outcome:
            case Completed(output=output):
                run.status, run.output = "completed", output
            case Failed(message=message):
                run.status, run.failure_message = "failed", message
            case Suspended(waitpoint=waitpoint, node_id=node_id):
                run.status, run.waitpoint = "waiting", {**waitpoint, "nodeId": node_id}
