"""What becomes of approvals no one decides: expiry, a rejection by time."""

from uuid import UUID

from django.db import transaction
from django.utils import timezone

from approvals.actions.decisions import announce_decided
from approvals.chain import do_append_decision
from approvals.models import (
    Approval,
    ApprovalStatus,
    DecisionKind,
)
from core.sweeps import Sweep
from runs.actions import resume_locked_run
from runs.engine.waitpoints import APPROVAL
from runs.models import Run
from runs.policy_context import missing_here

EXPIRED_RATIONALE = "expired"


def expire_due_approvals(*, now=None, limit: int | None = None) -> Sweep:
    """Expire every pending approval whose time is up. Safe to run anywhere, any time: an
    approval whose run this process could not go on with (its agent or flow is not in the packs
    loaded here) is left as it is and reported. Past its time it lets nothing run either way.
    ``limit``: at most this many, the longest overdue first."""
    now = now or timezone.now()
    sweep = Sweep()
    due = Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__lte=now).select_related("run")
    for approval in due.defer("run__messages").order_by("expires_at")[:limit]:
        if (why := missing_here(approval.run)) is not None:
            sweep.left.append(f"approval {approval.pk}: {why}")
        elif do_expire_approval(approval.pk, now=now):
            sweep.done.append(approval.pk)
    return sweep


@transaction.atomic(durable=True)
def do_expire_approval(approval_id: UUID, *, now=None) -> bool:
    """Expire one approval if it is still pending and due: it counts as a rejection with the
    rationale "expired", and its run resumes with the call not run."""
    now = now or timezone.now()
    run_id = Approval.objects.filter(pk=approval_id).values_list("run_id", flat=True).first()
    if run_id is None:
        return False
    run = Run.objects.select_for_update().get(pk=run_id)
    approval = Approval.objects.select_for_update().get(pk=approval_id)
    if approval.status != ApprovalStatus.PENDING or approval.expires_at is None or approval.expires_at > now:
        return False
    record = do_append_decision(
        approval=approval, decision=DecisionKind.REJECT, rationale=EXPIRED_RATIONALE, decided_at=now
    )
    approval.status, approval.decided_at, approval.decision = ApprovalStatus.EXPIRED, now, record
    approval.save(update_fields=["status", "decided_at", "decision"])
    announce_decided(approval, record)  # before the resume, as a reviewer's decision is
    resume_locked_run(
        run,
        waitpoint_key={"kind": APPROVAL, "approvalId": str(approval.pk)},
        resolution={
            "decision": DecisionKind.REJECT,
            "rationale": EXPIRED_RATIONALE,
            "approvalId": str(approval.pk),
        },
    )
    return True
