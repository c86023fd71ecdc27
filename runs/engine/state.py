"""What the engine knows about a run: the facts of its row, and its state folded from its journal.

The journal is the truth a run resumes from. ``RunState.fold`` replays it once; the engine then
applies each entry it records, so the state always equals the fold of the journal. The agent
turn, the flow interpreter and the selectors all read a run's past through this one replay.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from runs.engine.entries import RESULT_KINDS, EntryKind
from runs.engine.waitpoints import APPROVAL, APPROVE, CONNECTION_USE, INTERRUPTED_TOOL_CALL


@dataclass(frozen=True, kw_only=True)
class RunFacts:
    """The run being executed, as the driver read it from its row."""

    id: str
    tenant_id: str | None = None
    tenant_slug: str | None = None
    dry_run: bool = False
    read_only: bool = False
    # The person accountable for the run (its principal), as a user id.
    principal: str | None = None
    # The conversation an agent turn belongs to ("" for none: a flow, or a lone turn).
    conversation_id: str = ""
    # Whether that person started it themselves (trigger ``person``): its calls then use their
    # connections; in a run no person started, each use of a connection waits for its owner's yes.
    person_started: bool = False
    # In a run no person started: whose connection each app's calls use, app -> user id, as its
    # start named them (a service's start request, a mailbox's or a schedule's owner).
    connection_owners: Mapping[str, str] = field(default_factory=dict)
    input: Mapping[str, Any] = field(default_factory=dict)
    # An agent turn's conversation as stored (empty before its first step).
    messages: Sequence[Mapping[str, Any]] = ()
    # The conversation's earlier turns, for a turn that continues one and has not started yet.
    history: Sequence[Mapping[str, Any]] = ()


class JournalLike(Protocol):
    kind: str
    node_id: str
    payload: Mapping[str, Any] | None


@dataclass(frozen=True, kw_only=True)
class CallResult:
    tool_id: str
    result: Any
    # The journal entry that holds it: tool.completed, tool.failed, or tool.refused (the policy's).
    kind: str = ""


@dataclass
class RunState:
    # Calls whose start is journaled (tool.called), by call id; for a flow, the node's id.
    called: set[str] = field(default_factory=set)
    results: dict[str, CallResult] = field(default_factory=dict)
    # A person's decision on a call that waited for approval, by call id (with its tool's id).
    resolutions: dict[str, dict[str, Any]] = field(default_factory=dict)
    # A person's decision on repeating an interrupted call, by call id.
    recoveries: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The gate of the approval that let a call run, by call id: as its waitpoint asked it, with
    # what escalation raised while it waited (the role, the named reviewers). Repeating the call
    # after an interruption needs at least as much.
    approved_gates: dict[str, dict[str, Any]] = field(default_factory=dict)
    # What escalation steps changed of a waiting approval, by approval id (``approval.escalated``).
    escalations: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Apps whose connection its owner said yes to using in this run: app -> the owner's user id.
    connection_consents: dict[str, str] = field(default_factory=dict)
    # An owner's no to a call using their connection, by call id.
    connection_refusals: dict[str, dict[str, Any]] = field(default_factory=dict)
    node_outputs: dict[str, Any] = field(default_factory=dict)
    # What the run has waited on, as (call id, subject kind): each wait recorded once.
    waits: set[tuple[str, str]] = field(default_factory=set)
    # The model's replies (journaled ``text`` and ``toolCalls``) since the run last stopped to
    # wait: the steps an agent turn's conversation as last written may lack.
    replies_since_stop: list[Mapping[str, Any]] = field(default_factory=list)

    @classmethod
    def fold(cls, entries: Iterable[JournalLike]) -> "RunState":
        state = cls()
        for entry in entries:
            state.apply(entry.kind, entry.node_id, entry.payload or {})
        return state

    def apply(self, kind: str, node_id: str, payload: Mapping[str, Any]) -> None:
        if kind == EntryKind.TOOL_CALLED:
            self.called.add(payload["callId"])
        elif kind in RESULT_KINDS:
            self.results[payload["callId"]] = CallResult(
                tool_id=payload["toolId"], result=payload["result"], kind=kind
            )
        elif kind == EntryKind.NODE_COMPLETED:
            self.node_outputs[node_id] = payload["output"]
        elif kind == EntryKind.MODEL_CALLED:
            if "toolCalls" in payload:  # a reply, not a failed attempt
                self.replies_since_stop.append(payload)
        elif kind == EntryKind.WAIT_SUSPENDED:
            self.waits.add(wait_of(payload.get("waitpoint") or {}))
            self.replies_since_stop = []  # a run writes its conversation when it stops
        elif kind == EntryKind.WAIT_RESUMED:
            self._resolve(payload.get("waitpoint") or {}, payload.get("resolution") or {})
        elif kind == EntryKind.APPROVAL_ESCALATED:
            self._escalate(payload)

    def _resolve(self, waitpoint: Mapping[str, Any], resolution: Mapping[str, Any]) -> None:
        if waitpoint.get("kind") != APPROVAL:
            return
        if waitpoint.get("subjectKind") == INTERRUPTED_TOOL_CALL:
            self.recoveries[waitpoint["callId"]] = dict(resolution)
        elif waitpoint.get("subjectKind") == CONNECTION_USE:
            if resolution.get("decision") == APPROVE:
                self.connection_consents[waitpoint["app"]] = str(waitpoint["ownerId"])
            else:
                self.connection_refusals[waitpoint["callId"]] = dict(resolution)
        else:
            self.resolutions[waitpoint["callId"]] = {**resolution, "toolId": waitpoint["toolId"]}
            if resolution.get("decision") == APPROVE:
                escalated = self.escalations.get(str(waitpoint.get("approvalId", "")), {})
                self.approved_gates[waitpoint["callId"]] = {**(waitpoint.get("gate") or {}), **escalated}

    def _escalate(self, payload: Mapping[str, Any]) -> None:
        """Keep what an escalation step left an approval needing: the role it raised to, the
        named reviewers it added to (each payload holds the result, not the change)."""
        changed: dict[str, Any] = {}
        if payload.get("action") == "raiseRole" and payload.get("requiredRole"):
            changed["requiredRole"] = payload["requiredRole"]
        elif payload.get("action") == "addReviewers" and payload.get("reviewerIds"):
            changed["reviewerIds"] = list(payload["reviewerIds"])
        if changed:
            self.escalations.setdefault(str(payload.get("approvalId", "")), {}).update(changed)

    def first_wait(self, waitpoint: Mapping[str, Any]) -> bool:
        """Whether the run has never waited on this waitpoint's call and subject before."""
        return wait_of(waitpoint) not in self.waits

    def approved_tools(self, *, leaving_out: Iterable[str] = ()) -> set[str]:
        """The tools a person approved a call of, but for the calls ``leaving_out``."""
        skip = set(leaving_out)
        return {
            resolution["toolId"]
            for call_id, resolution in self.resolutions.items()
            if call_id not in skip and resolution.get("decision") == APPROVE
        }


def wait_of(waitpoint: Mapping[str, Any]) -> tuple[str, str]:
    return str(waitpoint.get("callId", "")), str(waitpoint.get("subjectKind", ""))
