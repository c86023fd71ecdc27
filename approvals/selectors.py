"""Reads of approvals and reviewers, always within one tenant."""

from django.db.models import Q, QuerySet

from approvals.exceptions import ApprovalNotFoundError
from approvals.models import Approval, ApprovalStatus
from core.lookups import one_or_none


def approval_list_for_tenant(tenant, *, status: str | None = None, run_id=None) -> QuerySet[Approval]:
    approvals = Approval.objects.filter(tenant=tenant).select_related("decision")
    if status:
        approvals = approvals.filter(status=status)
    if run_id is not None:
        # A flow's run waits on its agent steps' approvals too.
        approvals = approvals.filter(Q(run_id=run_id) | Q(run__parent_id=run_id))
    return approvals.order_by("-created_at")


def approval_get_for_tenant(tenant, approval_id) -> Approval:
    """The approval, if it belongs to ``tenant``; otherwise it does not exist for the caller."""
    approval = one_or_none(Approval.objects.select_related("decision").filter(tenant=tenant, pk=approval_id))
    if approval is None:
        raise ApprovalNotFoundError(f"there is no approval {approval_id}")
    return approval


def pending_approvals_of_run(run) -> QuerySet[Approval]:
    """What ``run`` waits for: its own pending approvals, and those of its agent steps' runs."""
    return Approval.objects.filter(
        Q(run=run) | Q(run__parent=run), tenant_id=run.tenant_id, status=ApprovalStatus.PENDING
    ).order_by("created_at")
