"""Taking escalation steps as approvals wait: a sweep, each step journaled on the waiting run."""

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from approvals.actions.approvals import do_expire_approval
from approvals.escalation_steps import due_at
from approvals.models import Approval, ApprovalStatus, Notification
from approvals.notifications import eligible_deciders
from approvals.roles import may_decide
from core.sweeps import Sweep
from runs.engine.entries import Entry, EntryKind
from runs.journal import record_on_locked
from runs.models import Run


def escalate_due_approvals(*, now=None, limit: int | None = None) -> Sweep:
    """Take every escalation step that is due, the longest overdue first."""
    now = now or timezone.now()
    sweep = Sweep()
    due = Approval.objects.filter(status=ApprovalStatus.PENDING, escalation_due_at__lte=now)
    for approval_id in due.order_by("escalation_due_at").values_list("pk", flat=True)[:limit]:
        sweep.done.extend(f"{approval_id} step {step}" for step in escalate(approval_id, now=now))
    return sweep


def escalate(approval_id, *, now) -> list[int]:
    """Take the steps of one approval that are due; the numbers of those taken."""
    taken = []
    while True:
        step, expire = _do_step(approval_id, now=now)
        if step is None:
            return taken
        taken.append(step)
        if expire:
            # The last step: it expires now, failing closed, as an expiry does.
            do_expire_approval(approval_id, now=now)
            return taken


@transaction.atomic(durable=True)
def _do_step(approval_id, *, now) -> tuple[int | None, bool]:
    run_id = Approval.objects.filter(pk=approval_id).values_list("run_id", flat=True).first()
    if run_id is None:
        return None, False
    run = Run.objects.select_for_update().get(pk=run_id)
    approval = Approval.objects.select_for_update().get(pk=approval_id)
    if (
        approval.status != ApprovalStatus.PENDING
        or approval.escalation_due_at is None
        or approval.escalation_due_at > now
    ):
        return None, False
    number = approval.escalation_done + 1
    step = approval.escalation[number - 1]
    payload = {"approvalId": str(approval.pk), "step": number, "afterSeconds": step["afterSeconds"]}
    fields = ["escalation_done", "escalation_due_at"]
    if "raiseRole" in step:
        if not may_decide(approval.required_role, step["raiseRole"]):
            approval.required_role = step["raiseRole"]
            fields.append("required_role")
        payload |= {"action": "raiseRole", "requiredRole": approval.required_role}
        if superseded := _supersede_below_role(approval, now=now, step=number):
            fields.append("approvals_given")
            payload |= {"superseded": superseded, "approvalsMissing": approval.approvals_missing}
    elif "addReviewers" in step:
        if approval.reviewer_ids:
            approval.reviewer_ids = sorted({*approval.reviewer_ids, *step.get("userIds", [])})
            fields.append("reviewer_ids")
        # The named reviewers as they now stand (none: anyone with the role), so that the run's
        # journal says who could decide it (a repeat of the call after an interruption needs as much).
        payload |= {
            "action": "addReviewers",
            "reviewers": step["addReviewers"],
            "reviewerIds": list(approval.reviewer_ids),
        }
    elif "notify" in step:
        payload |= {"action": "notify", "notify": step["notify"]}
    else:
        # From now on nobody may decide it; the expiry follows.
        approval.expires_at = min(approval.expires_at or now, now)
        fields.append("expires_at")
        payload |= {"action": "expire"}
    started = approval.escalation_started_at
    approval.escalation_done = number
    approval.escalation_due_at = due_at(started, approval.escalation, number)
    approval.save(update_fields=fields)
    if "raiseRole" in step:
        # Those who may decide it now, told that it still waits.
        payload["notified"] = _notify(
            approval, number, {user.pk for user in eligible_deciders(approval, now=now)}
        )
    elif "expire" not in step:
        payload["notified"] = _notify(approval, number, set(step.get("userIds", [])))
    record_on_locked(run, [Entry(kind=EntryKind.APPROVAL_ESCALATED, payload=payload)])
    return number, "expire" in step


def _supersede_below_role(approval: Approval, *, now, step: int) -> list[dict]:
    """Mark superseded each approval given that no longer counts now that the approval needs its
    ``required_role``: one given in a lower role. Kept in the record, not counted (the call needs
    as many approvals at the new role as it asks). The superseded, as the journal names them."""
    superseded = []
    reason = f"the required role rose to {approval.required_role} (escalation step {step})"
    given = []
    for entry in approval.approvals_given:
        if not entry.get("superseded") and not may_decide(entry.get("role", ""), approval.required_role):
            entry = {**entry, "superseded": True, "supersededAt": now.isoformat(), "supersededReason": reason}
            superseded.append(
                {"userId": entry["userId"], "reviewer": entry["reviewer"], "role": entry["role"]}
            )
        given.append(entry)
    if superseded:
        approval.approvals_given = given
    return superseded


def _notify(approval: Approval, step: int, user_ids: set[int]) -> list[str]:
    people = get_user_model().objects.filter(pk__in=user_ids, is_active=True).exclude(email="")
    users = list(people.order_by("username"))
    Notification.objects.bulk_create(
        [
            Notification(approval=approval, user=user, kind=Notification.Kind.ESCALATED, step=step)
            for user in users
        ],
        ignore_conflicts=True,
    )
    return [user.get_username() for user in users]
