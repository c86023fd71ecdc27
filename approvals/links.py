"""One-time decision links: a token per approval, action and person, of which only the SHA-256
is stored. A link decides nothing by itself: its page asks, and the POST it asks for decides
through ``check_complete_approval`` as the link's person, under the same decision rights as
every surface. A link is good once, while its approval is pending, for at most
``KINDGI_DECISION_LINK_HOURS`` (72) and never past the approval's expiry."""

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from approvals.actions.decisions import Completion, CompletionKind, check_complete_approval
from approvals.models import Approval, ApprovalStatus, DecisionLink
from approvals.step_up import StepUp
from core.conf import setting
from core.errors import DomainError


class LinkNotValidError(DomainError):
    http_status = 410
    code = "link_not_valid"


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def issue_link(approval: Approval, user, action: str, *, now=None) -> str:
    """A new link's token (shown once, in the mail)."""
    now = now or timezone.now()
    expires = now + timedelta(hours=setting("KINDGI_DECISION_LINK_HOURS"))
    if approval.expires_at is not None:
        expires = min(expires, approval.expires_at)
    token = secrets.token_urlsafe(32)
    DecisionLink.objects.create(
        approval=approval, user=user, action=action, token_hash=token_hash(token), expires_at=expires
    )
    return token


@dataclass(frozen=True, kw_only=True)
class LiveLink:
    link: DecisionLink
    approval: Approval


def live_link(token: str, *, now=None) -> LiveLink:
    """The link ``token`` opens, if it may still be used; otherwise why not. Every dead link
    answers alike, so that a forged token learns nothing."""
    now = now or timezone.now()
    link = (
        DecisionLink.objects.select_related("approval", "user__membership")
        .filter(token_hash=token_hash(token))
        .first()
    )
    if link is None or link.used_at is not None or link.expires_at <= now:
        raise LinkNotValidError(
            "this decision link is not valid: it was used, it expired, or it never existed"
        )
    if link.approval.status != ApprovalStatus.PENDING:
        raise LinkNotValidError(
            f"this approval is already {link.approval.status}; the link no longer decides"
        )
    return LiveLink(link=link, approval=link.approval)


def use_link(token: str, *, rationale: str = "", now=None, step_up: StepUp | None = None) -> Completion:
    """Decide with ``token``'s link: claimed first (so that two uses cannot both decide), then
    decided as its person; a refused decision gives the link back, changing nothing."""
    live = live_link(token, now=now)
    link = live.link
    claimed = DecisionLink.objects.filter(pk=link.pk, used_at__isnull=True).update(used_at=timezone.now())
    if not claimed:
        raise LinkNotValidError(
            "this decision link is not valid: it was used, it expired, or it never existed"
        )
    try:
        completion = check_complete_approval(
            approval_id=link.approval_id,
            acting_user=link.user,
            decision=link.action,
            rationale=rationale,
            step_up=step_up,
        )
    except Exception:  # refused (or broken): nothing was decided, so the link is good again
        DecisionLink.objects.filter(pk=link.pk).update(used_at=None)
        raise
    spent = DecisionLink.objects.filter(approval_id=link.approval_id, used_at__isnull=True)
    if completion.kind == CompletionKind.PARTIAL:
        # One approval of several: this person's links are spent; the others' still decide.
        spent = spent.filter(user_id=link.user_id)
    with transaction.atomic():
        spent.update(used_at=timezone.now())
    return completion
