"""Who may decide an approval: the one set of decision rights every surface uses.

The decision action asks ``can_decide`` under the row locks, just before it decides; the console
asks it to choose what to offer; whatever the API, the CLI or a mail link sends goes through the
action. So no surface offers a decision the action would refuse, and none can take one it would.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from django.utils import timezone

from approvals.exceptions import (
    ApprovalConflictError,
    ApprovalError,
    DecisionForbiddenError,
    NotAReviewerError,
)
from approvals.models import Approval, ApprovalStatus, Reviewer
from approvals.roles import may_decide
from core.conf import setting
from runs.engine.waitpoints import CONNECTION_USE
from tenants.selectors import is_service_account


class RefusalKind(StrEnum):
    NOT_A_REVIEWER = "not-a-reviewer"
    # Not this reviewer: the role, the named reviewers, four-eyes, not the connection's owner.
    FORBIDDEN = "forbidden"
    # Not now, for anyone: decided, cancelled or expired.
    CONFLICT = "conflict"


_ERRORS: dict[RefusalKind, type[ApprovalError]] = {
    RefusalKind.NOT_A_REVIEWER: NotAReviewerError,
    RefusalKind.FORBIDDEN: DecisionForbiddenError,
    RefusalKind.CONFLICT: ApprovalConflictError,
}


@dataclass(frozen=True, kw_only=True)
class Refusal:
    kind: RefusalKind
    reason: str

    def error(self) -> ApprovalError:
        return _ERRORS[self.kind](self.reason)


def can_decide(
    reviewer: Reviewer | None,
    approval: Approval,
    *,
    user=None,
    now=None,
    reviewer_names: Mapping[int, str] | None = None,
) -> Refusal | None:
    """Why ``reviewer`` may not decide ``approval`` now, or None when they may.

    A connection:use approval is its connection's owner's alone, whatever their role (they need
    not be a reviewer), before it expires. Any other: a reviewer of the approval's tenant, with
    its required role or higher, among its named reviewers if it has any, not its run's
    principal under four-eyes, not one who already approved it (an approval that needs several needs
    that many people), before it expires. No service account decides anything.
    ``user`` (whose registration ``reviewer`` is, if any) is the decider; ``reviewer_names``
    (user id → display name), when given, spares looking the named reviewers up (a page of
    approvals looks them all up at once)."""
    decider_id = user.pk if user is not None else reviewer.user_id if reviewer is not None else None
    if user is not None and not user.is_active:
        # Signing in refuses them already; a decision link, which needs no sign-in, must too.
        return Refusal(
            kind=RefusalKind.FORBIDDEN,
            reason=f"{user.get_username()}'s account is deactivated; they decide nothing",
        )
    if user is not None and is_service_account(user):
        return Refusal(
            kind=RefusalKind.FORBIDDEN,
            reason=f"{user.get_username()} is a service account; only a person decides an approval",
        )
    if approval.subject_kind == CONNECTION_USE:
        if decider_id != approval.connection_owner_id:
            connection = approval.connection
            return Refusal(
                kind=RefusalKind.FORBIDDEN,
                reason=f"only {connection['owner']} may decide this: the call would use their "
                f"connection to {connection['app']}",
            )
        return _not_now(approval, now)
    if reviewer is None or reviewer.tenant_id != approval.tenant_id:
        who = user.get_username() if user is not None else "you"
        return Refusal(
            kind=RefusalKind.NOT_A_REVIEWER,
            reason=f"{who} is not a reviewer; register as one to decide approvals",
        )
    if (refusal := _not_now(approval, now)) is not None:
        return refusal
    if reviewer.user_id in approval.approver_ids:
        counted = f"{len(approval.approvals_counted)} of {approval.required_approvals} approvals"
        if any(given["userId"] == reviewer.user_id for given in approval.approvals_superseded):
            # A reviewer decides an approval once, even when their approval stopped counting.
            return Refusal(
                kind=RefusalKind.FORBIDDEN,
                reason=f"you already approved this, and your approval no longer counts: the role rose "
                f"to {approval.required_role} ({counted}); another reviewer must give the next",
            )
        return Refusal(
            kind=RefusalKind.FORBIDDEN,
            reason=f"you already approved this ({counted}); another reviewer must give the next",
        )
    if approval.reviewer_ids and reviewer.user_id not in approval.reviewer_ids:
        known = reviewer_names if reviewer_names is not None else names_of_reviewers(approval.reviewer_ids)
        names = ", ".join(sorted(known[user_id] for user_id in approval.reviewer_ids if user_id in known))
        return Refusal(
            kind=RefusalKind.FORBIDDEN,
            reason=f"only these reviewers may decide this approval: {names or 'none'}",
        )
    if not may_decide(reviewer.role, approval.required_role):
        return Refusal(
            kind=RefusalKind.FORBIDDEN,
            reason=f"this approval needs a reviewer with the role {approval.required_role!r} or higher; "
            f"{reviewer.display_name} is {reviewer.role!r}",
        )
    if setting("KINDGI_FOUR_EYES") and approval.principal_id == reviewer.user_id:
        return Refusal(
            kind=RefusalKind.FORBIDDEN,
            reason="four-eyes: this run is yours (you started it, or it runs on your behalf: your "
            "schedule, your mailbox, your service token), so another reviewer must decide its calls",
        )
    return None


def _not_now(approval: Approval, now) -> Refusal | None:
    """Why nobody may decide ``approval`` now (decided, cancelled or expired), or None."""
    if approval.status != ApprovalStatus.PENDING:
        return Refusal(kind=RefusalKind.CONFLICT, reason=already_decided(approval))
    now = now or timezone.now()
    if approval.expires_at is not None and approval.expires_at <= now:
        # Fail closed: past its time an approval lets nothing run; the sweep records the expiry.
        return Refusal(
            kind=RefusalKind.CONFLICT,
            reason=f"approval {approval.pk} expired at {approval.expires_at.isoformat()}",
        )
    return None


def names_of_reviewers(user_ids: Iterable[int]) -> dict[int, str]:
    return dict(Reviewer.objects.filter(user_id__in=list(user_ids)).values_list("user_id", "display_name"))


def already_decided(approval: Approval) -> str:
    decision = getattr(approval, "decision", None)
    if decision is not None:
        who = decision.reviewer_name or "nobody"
        return (
            f"approval {approval.pk} is already {approval.status}: {decision.decision} by {who} "
            f"at {decision.decided_at.isoformat()}"
        )
    return f"approval {approval.pk} is already {approval.status}"
