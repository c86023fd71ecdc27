"""The approval waitpoint: an Approval appears when a run suspends on a call, and goes with it."""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from approvals.events import CANCELLED, CREATED, announce
from approvals.models import SUBJECT_KIND_PENDING_TOOL_CALL, Approval, ApprovalStatus
from approvals.roles import lowest_role
from runs.models import Run

APPROVAL = "approval"


def _expiry(gate: dict[str, Any]):
    seconds = gate.get("ttlSeconds") or getattr(settings, "KINDGI_APPROVAL_TTL_SECONDS", None)
    return timezone.now() + timedelta(seconds=seconds) if seconds else None


class ApprovalWaitpoints:
    def on_suspend(self, run: Run, waitpoint: dict[str, Any]) -> dict[str, Any]:
        """Precondition: ``run`` is locked, so no one else can be creating its approval: the
        one made for a redelivered suspension is found, not made twice."""
        gate = waitpoint.get("gate", {})
        identity = {
            "run": run,
            "call_id": waitpoint["callId"],
            "subject_kind": waitpoint.get("subjectKind", SUBJECT_KIND_PENDING_TOOL_CALL),
        }
        approval = Approval.objects.filter(**identity).first()
        if approval is None:
            approval = Approval.objects.create(
                **identity,
                tenant_id=run.tenant_id,
                tool_key=waitpoint["toolId"],
                tool_version=waitpoint["toolVersion"],
                agent_key=run.agent_key,
                agent_version=run.agent_version,
                arguments=waitpoint["arguments"],
                required_role=gate.get("requiredRole") or lowest_role(),
                gate=gate,
                reviewer_ids=list(gate.get("reviewerIds", [])),
                expires_at=_expiry(gate),
            )
            announce(approval, CREATED)
        return {**waitpoint, "approvalId": str(approval.pk)}

    def on_cancel(self, run: Run) -> None:
        now = timezone.now()
        for approval in Approval.objects.filter(run=run, status=ApprovalStatus.PENDING):
            approval.status, approval.decided_at = ApprovalStatus.CANCELLED, now
            approval.save(update_fields=["status", "decided_at"])
            announce(approval, CANCELLED)
