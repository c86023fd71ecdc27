"""The approval waitpoint: an Approval appears when a run suspends on a call, and goes with it."""

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone

from approvals.models import Approval, ApprovalStatus
from approvals.roles import lowest_role
from approvals.webhooks import APPROVAL_CREATED, record_event
from approvals.wire import approval_json
from runs.models import Run

APPROVAL = "approval"


def _expiry(gate: dict[str, Any]):
    seconds = gate.get("ttlSeconds") or getattr(settings, "KINDGI_APPROVAL_TTL_SECONDS", None)
    return timezone.now() + timedelta(seconds=seconds) if seconds else None


class ApprovalWaitpoints:
    def on_suspend(self, run: Run, waitpoint: dict[str, Any]) -> dict[str, Any]:
        gate = waitpoint.get("gate", {})
        approval, created = Approval.objects.get_or_create(
            run=run,
            call_id=waitpoint["callId"],
            defaults={
                "tenant_id": run.tenant_id,
                "tool_key": waitpoint["toolId"],
                "tool_version": waitpoint["toolVersion"],
                "agent_key": run.agent_key,
                "agent_version": run.agent_version,
                "arguments": waitpoint["arguments"],
                "required_role": gate.get("requiredRole") or lowest_role(),
                "gate": gate,
                "reviewer_ids": list(gate.get("reviewerIds", [])),
                "expires_at": _expiry(gate),
            },
        )
        if created:
            record_event(run.tenant_id, APPROVAL_CREATED, {"approval": approval_json(approval)})
        return {**waitpoint, "approvalId": str(approval.pk)}

    def on_cancel(self, run: Run) -> None:
        Approval.objects.filter(run=run, status=ApprovalStatus.PENDING).update(
            status=ApprovalStatus.CANCELLED, decided_at=timezone.now()
        )
