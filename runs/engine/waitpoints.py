"""What a suspended run waits on, defined once: the kinds, and the waitpoints the engine makes.

A waitpoint is plain JSON (it is stored on the run and in the journal). The app that owns a
kind (approvals owns ``approval``) registers with the driver and records the waitpoint's
counterpart when a run suspends on it; ``child-run`` belongs to the runs app itself.
"""

import hashlib
import json
from collections.abc import Mapping
from typing import Any

# Kinds of waitpoint.
APPROVAL = "approval"
CHILD_RUN = "child-run"
# A person's connection to an app (the connections app owns it).
CONNECTION = "connection"
# What a connection waitpoint waits for: the person whose connection a call uses to connect the app.
CONNECTION_REQUIRED = "connection:required"

# What an approval waitpoint asks a person about.
PENDING_TOOL_CALL = "tool-call:pending"
INTERRUPTED_TOOL_CALL = "tool-call:interrupted"
# In a run no person started: the yes of the person whose connection a call would use.
CONNECTION_USE = "connection:use"

# A person's answer, in a resolution's "decision".
APPROVE = "approve"
REJECT = "reject"
# The call does not run: the model reads the reviewer's note as its result and may propose another.
REQUEST_CHANGES = "request_changes"
CHANGES_REQUESTED = "changes_requested"

INTERRUPTED_REASON = (
    "recovery: the call started but its result was never recorded; it may already have "
    "taken effect. Approve to run it again, reject to tell the model it did not complete."
)


CONNECTION_USE_REASON = (
    "connection: no person started this run, and the call would act through the connection to "
    '"{app}" that its start named; it runs only with its owner\'s yes, which covers the rest of the run'
)


def call_digest(tool_id: str, tool_version: str, arguments: Any) -> str:
    """What an approval binds: the tool, its version and the exact arguments. The call that runs
    after the approval must have the same digest."""
    canonical = json.dumps(
        {"toolId": tool_id, "toolVersion": tool_version, "arguments": arguments},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def approval_waitpoint(
    *,
    call_id: str,
    tool_id: str,
    tool_version: str,
    arguments: Any,
    gate: dict[str, Any],
    subject_kind: str = PENDING_TOOL_CALL,
) -> dict[str, Any]:
    arguments = arguments if isinstance(arguments, dict) else {}
    return {
        "kind": APPROVAL,
        "subjectKind": subject_kind,
        "callId": call_id,
        "toolId": tool_id,
        "toolVersion": tool_version,
        "arguments": arguments,
        "digest": call_digest(tool_id, tool_version, arguments),
        "gate": gate,
    }


def interrupted_waitpoint(
    *,
    call_id: str,
    tool_id: str,
    tool_version: str,
    arguments: Any,
    needs: Mapping[str, Any] | None = None,
    needed_by: str = "",
) -> dict[str, Any]:
    """Ask a person whether to run again a call whose executor died before recording its result.

    ``needs``: what running the call needed of its deciders (``requiredRole``, ``reviewerIds``,
    ``requiredApprovals``; ``gates.strictest_ask``), which repeating it needs too; ``needed_by``
    says where that comes from, for the reason."""
    gate: dict[str, Any] = {"gate": "ask", "reason": INTERRUPTED_REASON}
    if needs:
        whence = f" (from {needed_by})" if needed_by else ""
        gate |= {
            **needs,
            "reason": f"{INTERRUPTED_REASON} Repeating it needs at least what running it needed: "
            f"{needs_words(needs)}{whence}.",
        }
    return approval_waitpoint(
        call_id=call_id,
        tool_id=tool_id,
        tool_version=tool_version,
        arguments=arguments,
        gate=gate,
        subject_kind=INTERRUPTED_TOOL_CALL,
    )


def needs_words(needs: Mapping[str, Any]) -> str:
    """What an approval needs of its deciders, in words ("" when only the defaults)."""
    parts = []
    if needs.get("requiredRole"):
        parts.append(f"the role {needs['requiredRole']} or higher")
    if (approvals := needs.get("requiredApprovals") or 1) > 1:
        parts.append(f"{approvals} approvals from distinct reviewers")
    if named := needs.get("reviewerIds"):
        parts.append(
            f"reviewers among the {len(named)} named" if len(named) > 1 else "the one reviewer named"
        )
    return ", ".join(parts)


def child_run_waitpoint(run_id: str) -> dict[str, Any]:
    return {"kind": CHILD_RUN, "runId": run_id}


def connection_required_waitpoint(*, call_id: str, tool_id: str, app: str, owner_id: str) -> dict[str, Any]:
    """Wait for the person whose connection the call uses (``owner_id``: who started the run, or
    whom its start named) to connect ``app``; the call then runs with their connection."""
    return {
        "kind": CONNECTION,
        "subjectKind": CONNECTION_REQUIRED,
        "callId": call_id,
        "toolId": tool_id,
        "app": app,
        "ownerId": owner_id,
    }


def connection_use_waitpoint(
    *, call_id: str, tool_id: str, tool_version: str, arguments: Any, app: str, owner_id: str
) -> dict[str, Any]:
    """Ask the person whose connection to ``app`` a call of a run nobody started would use for
    their yes; only they may give it, and it covers the rest of the run."""
    waitpoint = approval_waitpoint(
        call_id=call_id,
        tool_id=tool_id,
        tool_version=tool_version,
        arguments=arguments,
        gate={"gate": "ask", "reason": CONNECTION_USE_REASON.format(app=app)},
        subject_kind=CONNECTION_USE,
    )
    return {**waitpoint, "app": app, "ownerId": owner_id}
