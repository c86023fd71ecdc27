"""Telling people of the approvals they may decide: a mail each, with one-time decision links.

Who is told is whoever the one set of decision rights (``approvals.permissions.can_decide``)
lets decide, asked reviewer by reviewer: the role, the named reviewers, four-eyes and the
connection's owner are judged in one place. The sweeper (``deliver_due_notifications``) writes
the notifications of each approval made since its last round (outbox rows, one per person), so
that a run's suspension does not wait on it, and mails them through Kindgi's mailer: at once,
in a digest every few minutes, or never, as each reviewer chose. Reminders are written when an
approval nears its expiry.
"""

import logging
from collections import defaultdict
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.core.mail import EmailMessage
from django.db import transaction
from django.db.models import F, Q
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.text import Truncator

from approvals.links import issue_link
from approvals.models import Approval, ApprovalStatus, Notification, Reviewer
from approvals.permissions import can_decide
from core.conf import setting
from core.public import public_url
from core.sweeps import Sweep
from runs.engine.waitpoints import CONNECTION_USE
from tools.mcp.definitions import tool_for_tenant

logger = logging.getLogger("kindgi.approvals")

# A notification that could not be sent is tried again on later sweeps, up to this many times in
# all, the wait doubling from RETRY_SECONDS (about an hour in all).
MAX_ATTEMPTS = 8
RETRY_SECONDS = 30


def eligible_deciders(approval: Approval, *, now=None) -> list:
    """The people who may decide ``approval`` now, by the decision rights every surface uses."""
    if approval.subject_kind == CONNECTION_USE:
        owner = (
            get_user_model()
            .objects.select_related("membership")
            .filter(pk=approval.connection_owner_id)
            .first()
        )
        mine = Reviewer.objects.filter(user=owner).first() if owner is not None else None
        return [owner] if owner and can_decide(mine, approval, user=owner, now=now) is None else []
    reviewers = Reviewer.objects.filter(tenant_id=approval.tenant_id).select_related("user__membership")
    if approval.reviewer_ids:
        reviewers = reviewers.filter(user_id__in=approval.reviewer_ids)
    reviewers = list(reviewers)
    names = {reviewer.user_id: reviewer.display_name for reviewer in reviewers}
    return [
        reviewer.user
        for reviewer in reviewers
        if can_decide(reviewer, approval, user=reviewer.user, now=now, reviewer_names=names) is None
    ]


def queue_notifications(approval: Approval, kind: str, *, now=None) -> int:
    """Write a notification of ``kind`` for each person who may decide ``approval`` and has a
    mail address. Call inside a transaction that holds the approval; a person told of it before
    in this kind is not told again."""
    users = [user for user in eligible_deciders(approval, now=now) if user.email]
    made = Notification.objects.bulk_create(
        [Notification(approval=approval, user=user, kind=kind) for user in users], ignore_conflicts=True
    )
    return len(made)


def queue_new_approvals(*, now=None, limit: int | None = None) -> list:
    """Write the notifications of the approvals made since the last time (oldest first, at most
    ``limit``); return their ids."""
    now = now or timezone.now()
    new = Approval.objects.filter(notified_at__isnull=True).order_by("created_at")
    return [pk for pk in new.values_list("pk", flat=True)[:limit] if _do_queue_created(pk, now=now)]


@transaction.atomic(durable=True)
def _do_queue_created(approval_id, *, now) -> bool:
    approval = Approval.objects.select_for_update().get(pk=approval_id)
    if approval.notified_at is not None:
        return False  # another sweeper did
    approval.notified_at = now
    approval.save(update_fields=["notified_at"])
    if approval.status == ApprovalStatus.PENDING:
        queue_notifications(approval, Notification.Kind.CREATED, now=now)
    return True


def remind_due_approvals(*, now=None, limit: int | None = None) -> Sweep:
    """Remind the deciders of each pending approval that expires within
    ``KINDGI_REMINDER_SECONDS``, once."""
    now = now or timezone.now()
    sweep = Sweep()
    window = setting("KINDGI_REMINDER_SECONDS")
    if not window:
        return sweep
    due = Approval.objects.filter(
        status=ApprovalStatus.PENDING,
        reminded_at__isnull=True,
        expires_at__gt=now,
        expires_at__lte=now + timedelta(seconds=window),
    ).order_by("expires_at")
    for approval_id in due.values_list("pk", flat=True)[:limit]:
        if _do_remind(approval_id, now=now):
            sweep.done.append(approval_id)
    return sweep


@transaction.atomic(durable=True)
def _do_remind(approval_id, *, now) -> bool:
    approval = Approval.objects.select_for_update().get(pk=approval_id)
    if approval.status != ApprovalStatus.PENDING or approval.reminded_at is not None:
        return False
    approval.reminded_at = now
    approval.save(update_fields=["reminded_at"])
    queue_notifications(approval, Notification.Kind.REMINDER, now=now)
    return True


def deliver_due_notifications(*, now=None, limit: int | None = None) -> Sweep:
    """Mail what is due: each notification of a reviewer who chose ``immediately``; for one who
    chose a digest, everything waiting once their last digest is old enough. A notification
    whose approval is no longer pending, or whose person may no longer decide it, is closed
    unsent. Sent ones are reported by notification id."""
    now = now or timezone.now()
    sweep = Sweep()
    queue_new_approvals(now=now, limit=limit)
    waiting = (
        Notification.objects.filter(done_at__isnull=True, attempts__lt=MAX_ATTEMPTS)
        .filter(Q(next_attempt_at__isnull=True) | Q(next_attempt_at__lte=now))
        # A digest not yet due waits where it is, and does not hold up what is due behind it.
        .exclude(
            kind__in=[Notification.Kind.CREATED, Notification.Kind.REMINDER],
            user__reviewer__notify=Reviewer.Notify.DIGEST,
            user__reviewer__next_digest_at__gt=now,
        )
        .select_related("approval__run", "user__membership", "user__reviewer")
        .order_by("created_at")[:limit]
    )
    by_user: dict[int, list[Notification]] = defaultdict(list)
    for notification in waiting:
        by_user[notification.user_id].append(notification)
    for notifications in by_user.values():
        user = notifications[0].user
        reviewer = getattr(user, "reviewer", None)
        mode = reviewer.notify if reviewer is not None else Reviewer.Notify.IMMEDIATELY
        live, urgent = [], []
        for notification in notifications:
            if notification.approval.status != ApprovalStatus.PENDING:
                _close(notification, now=now, sent=False)
            elif notification.kind == Notification.Kind.ESCALATED:
                urgent.append(notification)  # an escalation reaches them whatever they chose
            elif mode == Reviewer.Notify.NONE or not _may_decide(notification, reviewer, now):
                _close(notification, now=now, sent=False)
            else:
                live.append(notification)
        for notification in urgent:
            if _send(user, [notification], now=now, digest=False, reviewer=reviewer):
                sweep.done.append(notification.pk)
        if not live:
            continue
        # A digest is one mail of everything waiting; otherwise a mail each.
        batches = [live] if mode == Reviewer.Notify.DIGEST else [[item] for item in live]
        for batch in batches:
            if _send(user, batch, now=now, digest=mode == Reviewer.Notify.DIGEST, reviewer=reviewer):
                sweep.done.extend(notification.pk for notification in batch)
                if mode == Reviewer.Notify.DIGEST:
                    Reviewer.objects.filter(pk=reviewer.pk).update(
                        next_digest_at=now + timedelta(minutes=reviewer.digest_minutes)
                    )
            else:
                sweep.left.extend(f"notification {notification.pk}: not sent" for notification in batch)
    return sweep


def _may_decide(notification: Notification, reviewer: Reviewer | None, now) -> bool:
    return can_decide(reviewer, notification.approval, user=notification.user, now=now) is None


def _close(notification: Notification, *, now, sent: bool) -> None:
    Notification.objects.filter(pk=notification.pk).update(done_at=now, sent=sent)


def _subject(approval: Approval) -> str:
    """The call in a sentence, short enough for a subject line (one line: no breaks)."""
    return Truncator(" ".join(approval.said.split())).chars(100)


def _send(user, notifications: list[Notification], *, now, digest: bool, reviewer: Reviewer | None) -> bool:
    """Mail ``notifications`` to ``user`` in one message, each approval with its links if they
    may decide it."""
    items = []
    for notification in notifications:
        approval = notification.approval
        links = {}
        if _may_decide(notification, reviewer, now):
            links = {
                action: public_url(
                    reverse("console:decision-link", args=[issue_link(approval, user, action, now=now)])
                )
                for action in approval.decisions_offered
            }
        items.append(
            {"approval": approval, "kind": notification.kind, "links": links, "facts": _facts(approval)}
        )
    first = notifications[0].approval
    if digest:
        subject = f"Kindgi: {len(items)} approval(s) waiting for you"
    elif notifications[0].kind == Notification.Kind.REMINDER:
        subject = f"Kindgi reminder: {_subject(first)} expires soon"
    elif notifications[0].kind == Notification.Kind.ESCALATED:
        subject = f"Kindgi escalation: {_subject(first)} is still waiting"
    else:
        subject = f"Kindgi: {_subject(first)}"
    body = render_to_string(
        "approvals/notification.txt",
        {"items": items, "console": public_url(reverse("console:queue")), "digest": digest},
    )
    message = EmailMessage(
        subject=subject, body=body, to=[user.email], headers={"Auto-Submitted": "auto-generated"}
    )
    try:
        message.send(using=setting("KINDGI_MAILER"))
    except Exception as error:
        # Kept for the next sweep; the error's text names the mailer's failure, not the mail.
        wait = timedelta(seconds=RETRY_SECONDS * 2 ** notifications[0].attempts)
        Notification.objects.filter(pk__in=[n.pk for n in notifications]).update(
            attempts=F("attempts") + 1,
            next_attempt_at=now + wait,
            last_error=f"{type(error).__name__}: {error}"[:500],
        )
        logger.warning("notification mail to user %s not sent: %s", user.pk, type(error).__name__)
        return False
    Notification.objects.filter(pk__in=[n.pk for n in notifications]).update(done_at=now, sent=True)
    return True


def _facts(approval: Approval) -> dict:
    tool = tool_for_tenant(approval.tool_key, approval.tool_version, approval.tenant_id)
    return {
        "description": tool.description if tool is not None else "",
        "reason": approval.gate.get("reason", ""),
        "parameters": approval.run.agent_parameters,
        "run": public_url(reverse("console:run", args=[approval.run_id])),
        "page": public_url(reverse("console:approval", args=[approval.pk])),
    }
