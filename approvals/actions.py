"""Registering reviewers and deciding approvals: the one entry point the API, console and CLI call."""

import logging
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pydantic import ValidationError

from approvals.events import DECIDED, EXPIRED, announce
from approvals.exceptions import (
    ApprovalConflictError,
    ApprovalInputError,
    ApprovalNotFoundError,
    DecisionForbiddenError,
    NotAReviewerError,
)
from approvals.models import Approval, ApprovalStatus, Decision, DecisionKind, Reviewer
from approvals.roles import is_role, lowest_role, may_decide, reviewer_roles
from approvals.waitpoints import APPROVAL
from runs.actions import resume_locked_run
from runs.engine.invocation import field_errors, oversized_arguments
from runs.models import Run
from runs.secrets import scrub_secrets
from tenants.selectors import tenant_for_user
from tools.registry import get_registry

logger = logging.getLogger("kindgi.approvals")

DISPLAY_NAME_MAX = 200


def check_register_reviewer(*, acting_user, role: Any, display_name: Any) -> Reviewer:
    """Register the acting user as a reviewer of their tenant, or update their registration.

    Anyone may register at the lowest role; a higher role needs a tenant admin.
    """
    tenant = tenant_for_user(acting_user)
    errors = []
    if not is_role(role):
        errors.append(f"/role: {role!r} is not a reviewer role (valid roles: {', '.join(reviewer_roles())})")
    if not isinstance(display_name, str) or not display_name.strip():
        errors.append("/displayName: a display name is required")
    elif len(display_name.strip()) > DISPLAY_NAME_MAX:
        errors.append(f"/displayName: at most {DISPLAY_NAME_MAX} characters")
    if errors:
        raise ApprovalInputError(errors)
    if role != lowest_role() and not acting_user.membership.is_tenant_admin:
        raise DecisionForbiddenError(
            f"only a tenant admin may register a reviewer with the role {role!r}; "
            f"register as {lowest_role()!r} and ask a tenant admin to raise it"
        )
    return do_register_reviewer(user=acting_user, tenant=tenant, role=role, display_name=display_name.strip())


@transaction.atomic(durable=True)
def do_register_reviewer(*, user, tenant, role: str, display_name: str) -> Reviewer:
    reviewer, _ = Reviewer.objects.update_or_create(
        user=user, defaults={"tenant": tenant, "role": role, "display_name": display_name}
    )
    return reviewer


@dataclass(frozen=True, kw_only=True)
class Completion:
    """What deciding an approval returns: the decision is final and the run was resumed."""

    approval: Approval
    decision: Decision
    kind: str = "terminal"
    waitpoint_resolved: bool = True


def check_complete_approval(
    *,
    approval_id: UUID,
    acting_user,
    decision: Any,
    rationale: Any = "",
    arguments: Any = None,
) -> Completion:
    """Approve or reject an approval. A rejection needs a rationale; an approval may edit the
    arguments, which are validated against the tool's input schema like the model's were."""
    tenant = tenant_for_user(acting_user)
    errors = []
    if decision not in DecisionKind.values:
        errors.append(f"/decision: {decision!r} is not one of: approve, reject")
    if rationale is None:
        rationale = ""
    if not isinstance(rationale, str):
        errors.append("/rationale: must be text")
    elif decision == DecisionKind.REJECT and not rationale.strip():
        errors.append("/rationale: a rejection needs a rationale")
    if arguments is not None and decision != DecisionKind.APPROVE:
        errors.append("/arguments: only an approval can change the arguments")
    if errors:
        raise ApprovalInputError(errors)
    return do_complete_approval(
        approval_id=approval_id,
        tenant=tenant,
        acting_user=acting_user,
        decision=decision,
        rationale=scrub_secrets(rationale.strip()),
        arguments=scrub_secrets(arguments),
    )


@transaction.atomic(durable=True)
def do_complete_approval(
    *, approval_id: UUID, tenant, acting_user, decision: str, rationale: str, arguments: Any
) -> Completion:
    """Decide once, under row locks taken run first, then approval (the order every path uses)."""
    run_id = Approval.objects.filter(pk=approval_id, tenant=tenant).values_list("run_id", flat=True).first()
    if run_id is None:
        raise ApprovalNotFoundError(f"there is no approval {approval_id}")
    run = Run.objects.select_for_update().get(pk=run_id)
    approval = Approval.objects.select_for_update().get(pk=approval_id)
    reviewer = Reviewer.objects.filter(user=acting_user, tenant=tenant).first()
    if reviewer is None:
        raise NotAReviewerError(
            f"{acting_user.get_username()} is not a reviewer; register as one to decide approvals"
        )
    if approval.status != ApprovalStatus.PENDING:
        raise ApprovalConflictError(_already_decided(approval))
    if approval.expires_at is not None and approval.expires_at <= timezone.now():
        # Fail closed: past its time an approval lets nothing run; the sweep records the expiry.
        raise ApprovalConflictError(f"approval {approval.pk} expired at {approval.expires_at.isoformat()}")
    if approval.reviewer_ids and acting_user.pk not in approval.reviewer_ids:
        names = ", ".join(
            Reviewer.objects.filter(user_id__in=approval.reviewer_ids).values_list("display_name", flat=True)
        )
        raise DecisionForbiddenError(f"only these reviewers may decide this approval: {names or 'none'}")
    if not may_decide(reviewer.role, approval.required_role):
        raise DecisionForbiddenError(
            f"this approval needs a reviewer with the role {approval.required_role!r} or higher; "
            f"{reviewer.display_name} is {reviewer.role!r}"
        )
    if getattr(settings, "KINDGI_FOUR_EYES", False) and _started_by(run) == acting_user.pk:
        raise DecisionForbiddenError(
            "four-eyes: you started this run, so another reviewer must decide its calls"
        )
    edited = _validated_edit(approval, arguments) if arguments is not None else None
    now = timezone.now()
    record = Decision.objects.create(
        approval=approval,
        decision=decision,
        rationale=rationale,
        reviewer=reviewer,
        reviewer_name=reviewer.display_name,
        reviewer_role_at_decision=reviewer.role,
        arguments=edited,
        decided_at=now,
    )
    approval.status = ApprovalStatus.APPROVED if decision == DecisionKind.APPROVE else ApprovalStatus.REJECTED
    approval.decided_at = now
    approval.save(update_fields=["status", "decided_at"])
    resolution = {
        "decision": decision,
        "rationale": rationale,
        "approvalId": str(approval.pk),
        "reviewer": reviewer.display_name,
    }
    if edited is not None:
        resolution["arguments"] = edited
    # Announced before the resume is queued: the event's on-commit send then goes out first,
    # not after the resumed run has executed (immediate tasks run it on commit too).
    _decided(approval, record)
    resume_locked_run(
        run, waitpoint_key={"kind": APPROVAL, "approvalId": str(approval.pk)}, resolution=resolution
    )
    return Completion(approval=approval, decision=record)


def _decided(approval: Approval, decision: Decision) -> None:
    announce(approval, EXPIRED if approval.status == ApprovalStatus.EXPIRED else DECIDED, decision)
    transaction.on_commit(
        lambda: logger.info(
            "approval %s of run %s: %s by %s",
            approval.pk,
            approval.run_id,
            approval.status,
            decision.reviewer_name or "its expiry",
            extra={"run_id": str(approval.run_id)},
        )
    )


def _started_by(run: Run):
    """Who started the run, or the flow run it is a step of."""
    while run.started_by_id is None and run.parent_id is not None:
        run = run.parent
    return run.started_by_id


def _already_decided(approval: Approval) -> str:
    decision = getattr(approval, "decision", None)
    if decision is not None:
        who = decision.reviewer_name or "nobody"
        return (
            f"approval {approval.pk} is already {approval.status}: {decision.decision} by {who} "
            f"at {decision.decided_at.isoformat()}"
        )
    return f"approval {approval.pk} is already {approval.status}"


def _validated_edit(approval: Approval, arguments: Any) -> dict[str, Any]:
    tool = get_registry().tool(approval.tool_key, approval.tool_version)
    if tool is None:
        raise ApprovalConflictError(f"tool {approval.tool_key}@{approval.tool_version} is no longer loaded")
    if (refusal := oversized_arguments(arguments)) is not None:
        raise ApprovalInputError([f"/arguments: {refusal}"])
    try:
        validated = tool.input_model.model_validate(arguments)
    except ValidationError as error:
        raise ApprovalInputError([f"/arguments{line}" for line in field_errors(error)]) from None
    return validated.model_dump(mode="json", by_alias=True)


EXPIRED_RATIONALE = "expired"


def expire_due_approvals(*, now=None) -> int:
    """Expire every pending approval whose time is up; return how many. Safe to run anywhere, any time."""
    now = now or timezone.now()
    due = Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__lte=now).values_list(
        "pk", flat=True
    )
    return sum(1 for approval_id in list(due) if do_expire_approval(approval_id, now=now))


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
    record = Decision.objects.create(
        approval=approval, decision=DecisionKind.REJECT, rationale=EXPIRED_RATIONALE, decided_at=now
    )
    approval.status, approval.decided_at = ApprovalStatus.EXPIRED, now
    approval.save(update_fields=["status", "decided_at"])
    _decided(approval, record)  # before the resume, as above
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
