"""The journal's vocabulary: every kind of entry, what its payload holds, and an entry to record."""

from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class EntryKind(StrEnum):
    RUN_STARTED = "run.started"
    NODE_STARTED = "node.started"
    NODE_COMPLETED = "node.completed"
    MODEL_CALLED = "model.called"
    TOOL_CALLED = "tool.called"
    TOOL_COMPLETED = "tool.completed"
    TOOL_FAILED = "tool.failed"
    TOOL_REFUSED = "tool.refused"
    GUARDRAIL_JUDGED = "guardrail.judged"
    WAIT_SUSPENDED = "wait.suspended"
    WAIT_RESUMED = "wait.resumed"
    # Written by the approvals app, not the engine: an escalation step taken while a run waits.
    APPROVAL_ESCALATED = "approval.escalated"
    RUN_COMPLETED = "run.completed"
    RUN_FAILED = "run.failed"
    RUN_CANCELLED = "run.cancelled"


PAYLOADS: dict[EntryKind, str] = {
    EntryKind.RUN_STARTED: "{input, dryRun, readOnly}",
    EntryKind.NODE_STARTED: "{kind, target, input} (nodeId set)",
    EntryKind.NODE_COMPLETED: "{output} (nodeId set)",
    EntryKind.MODEL_CALLED: "{model, step, text, toolCalls, usage} (durationMs)",
    EntryKind.TOOL_CALLED: "{callId, toolId, toolVersion, arguments, gate, modelArguments?, connection?}",
    EntryKind.TOOL_COMPLETED: "{callId, toolId, result} (durationMs)",
    EntryKind.TOOL_FAILED: "{callId, toolId, result, traceback?} (durationMs)",
    EntryKind.TOOL_REFUSED: "{callId, toolId, reason, result, gate?, arguments? (with gate)}",
    EntryKind.GUARDRAIL_JUDGED: "{callId, guardrail, allowed, reason}",
    EntryKind.WAIT_SUSPENDED: "{waitpoint} (nodeId set)",
    EntryKind.WAIT_RESUMED: "{waitpoint, resolution} (nodeId set)",
    EntryKind.APPROVAL_ESCALATED: (
        "{approvalId, step, action, requiredRole (+ superseded?, approvalsMissing?)|reviewers + reviewerIds|"
        "notify, notified}"
    ),
    EntryKind.RUN_COMPLETED: "{output}",
    EntryKind.RUN_FAILED: "{failureMessage}",
    EntryKind.RUN_CANCELLED: "{reason}",
}

# The entries that give a call its result: once one is journaled, the call never runs again.
RESULT_KINDS = frozenset({EntryKind.TOOL_COMPLETED, EntryKind.TOOL_FAILED, EntryKind.TOOL_REFUSED})


@dataclass(frozen=True, kw_only=True)
class Entry:
    """A journal entry the engine asks to record."""

    kind: str
    node_id: str = ""
    payload: dict[str, Any] | None = None
    duration_ms: int | None = None
