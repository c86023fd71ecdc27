"""Approvals, decisions and completions as JSON, in the shape DESIGN §4 and the seeds give."""

from typing import TYPE_CHECKING, Any

from approvals.models import Approval, Decision

if TYPE_CHECKING:
    from approvals.actions import Completion


def _time(value) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def approval_json(approval: Approval) -> dict[str, Any]:
    return {
        "id": str(approval.pk),
        "subjectKind": approval.subject_kind,
        "subjectRef": approval.subject_ref,
        "requiredRole": approval.required_role,
        "status": approval.status,
        "title": approval.title,
        "provenanceRef": approval.provenance_ref,
        "createdAt": _time(approval.created_at),
        "decidedAt": _time(approval.decided_at),
        "expiresAt": _time(approval.expires_at),
    }


def decision_json(decision: Decision) -> dict[str, Any]:
    return {
        "decision": decision.decision,
        "rationale": decision.rationale,
        "reviewerRoleAtDecision": decision.reviewer_role_at_decision,
        "reviewer": decision.reviewer_name,
        "decidedAt": _time(decision.decided_at),
        "arguments": decision.arguments,
    }


def completion_json(completion: "Completion") -> dict[str, Any]:
    return {
        "kind": completion.kind,
        "approval": approval_json(completion.approval),
        "decision": decision_json(completion.decision),
        "waitpointResolved": completion.waitpoint_resolved,
    }
