"""Reads of approvals and reviewers, always within one tenant."""

from django.db.models import QuerySet

from approvals.exceptions import ApprovalNotFoundError
from approvals.models import Approval


def approval_list_for_tenant(tenant, *, status: str | None = None) -> QuerySet[Approval]:
    approvals = Approval.objects.filter(tenant=tenant).select_related("decision")
    if status:
        approvals = approvals.filter(status=status)
    return approvals.order_by("-created_at")


def approval_get_for_tenant(tenant, approval_id) -> Approval:
    """The approval, if it belongs to ``tenant``; otherwise it does not exist for the caller."""
    approval = Approval.objects.select_related("decision").filter(tenant=tenant, pk=approval_id).first()
    if approval is None:
        raise ApprovalNotFoundError(f"there is no approval {approval_id}")
    return approval
