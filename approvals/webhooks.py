"""Approval events to each tenant's webhook: recorded with the change, sent after it commits.

A delivery row is written in the transaction that creates or decides the
approval, so an event is never lost nor sent for a change that rolled back.
Each attempt POSTs ``{"id", "event", "occurredAt", "data"}`` signed as Standard
Webhooks signs (``kindgi.webhooks``: ``webhook-id``, ``webhook-timestamp``,
``webhook-signature``, with the previous secret's signature too while one is being
replaced). The older headers ``X-Kindgi-Event``, ``X-Kindgi-Delivery`` and
``X-Kindgi-Signature: sha256=<hex HMAC-SHA256 of the body>`` are still sent, for one
release: that signature has no timestamp, so a captured delivery verifies for ever.
A failure is retried with exponential backoff, up to ``KINDGI_WEBHOOK_MAX_ATTEMPTS``.
"""

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.db import transaction
from django.tasks import default_task_backend, task
from django.utils import timezone

from approvals.models import Webhook, WebhookDelivery
from core.conf import setting
from kindgi.webhooks import WebhookVerificationError, signed_headers
from tenants.config import cached

logger = logging.getLogger("kindgi.webhooks")


def sign(secret: str, body: bytes) -> str:
    """The deprecated ``X-Kindgi-Signature``, as it always was: keyed with the secret's text."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def record_event(
    tenant_id, event: str, data: Callable[[], dict[str, Any]], *, config_version: int | None = None
) -> None:
    """Queue ``event`` for the tenant's webhook, if it has one (only then is ``data()`` made).
    Call inside the change's transaction; with the tenant's ``config_version`` (read with the
    rows the change locked), the webhook is looked up once per process and version."""
    webhook = cached(
        ("webhook", tenant_id),
        config_version,
        lambda: Webhook.objects.filter(tenant_id=tenant_id, enabled=True).only("pk").first(),
    )
    if webhook is None:
        return
    delivery = WebhookDelivery.objects.create(
        webhook=webhook, event=event, payload=data(), next_attempt_at=timezone.now()
    )
    # Robust: a queue that does not answer (Redis, with KINDGI_TASKS=rq or celery) holds up
    # nothing else that waits for the commit; the sweeps deliver what is due.
    transaction.on_commit(lambda: deliver_webhook.enqueue(str(delivery.pk)), robust=True)


@task()
def deliver_webhook(delivery_id: str) -> bool:
    """Attempt one delivery. Safe to deliver twice: an attempt claims the delivery first."""
    return attempt_delivery(delivery_id)


def _claim(delivery_id: UUID, now) -> bool:
    """Take a due delivery so that no one else attempts it at the same time."""
    hold = now + timedelta(seconds=setting("KINDGI_WEBHOOK_TIMEOUT_SECONDS") * 2)
    return bool(
        WebhookDelivery.objects.filter(
            pk=delivery_id, status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now
        ).update(next_attempt_at=hold)
    )


def attempt_delivery(delivery_id: UUID, *, now=None) -> bool:
    """POST one due delivery once and record the attempt; return whether it succeeded."""
    now = now or timezone.now()
    if not _claim(delivery_id, now):
        return False
    delivery = WebhookDelivery.objects.select_related("webhook").get(pk=delivery_id)
    body = json.dumps(
        {
            "id": str(delivery.pk),
            "event": delivery.event,
            "occurredAt": delivery.created_at.isoformat().replace("+00:00", "Z"),
            "data": delivery.payload,
        },
        separators=(",", ":"),
    ).encode()
    try:
        signed = signed_headers(
            str(delivery.pk),
            body,
            [secret for secret in (delivery.webhook.secret, delivery.webhook.previous_secret) if secret],
            timestamp=int(time.time()),
        )
    except WebhookVerificationError as error:
        # A secret saved before secrets were checked (whsec_ and then no base64): this delivery
        # fails, said, and no other is held up.
        _record_attempt(delivery, succeeded=False, status_code=None, error=f"the webhook's secret: {error}")
        return False
    request = urllib.request.Request(
        delivery.webhook.url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "Kindgi-Webhooks/1",
            **signed,
            # Deprecated: kept for one release, for receivers that check them.
            "X-Kindgi-Event": delivery.event,
            "X-Kindgi-Delivery": str(delivery.pk),
            "X-Kindgi-Signature": sign(delivery.webhook.secret, body),
        },
    )
    status_code, error = None, ""
    try:
        with urllib.request.urlopen(request, timeout=setting("KINDGI_WEBHOOK_TIMEOUT_SECONDS")) as response:
            status_code = response.status
    except urllib.error.HTTPError as failure:
        status_code, error = failure.code, f"HTTP {failure.code}"
    except (urllib.error.URLError, OSError) as failure:
        error = f"{type(failure).__name__}: {failure}"
    succeeded = status_code is not None and 200 <= status_code < 300
    _record_attempt(delivery, succeeded=succeeded, status_code=status_code, error=error)
    return succeeded


def _record_attempt(delivery: WebhookDelivery, *, succeeded: bool, status_code, error: str) -> None:
    now = timezone.now()
    delivery.attempts += 1
    delivery.last_status_code, delivery.last_error = status_code, error
    if succeeded:
        delivery.status, delivery.delivered_at, delivery.next_attempt_at = (
            WebhookDelivery.Status.SUCCEEDED,
            now,
            None,
        )
    elif delivery.attempts >= setting("KINDGI_WEBHOOK_MAX_ATTEMPTS"):
        delivery.status, delivery.next_attempt_at = WebhookDelivery.Status.FAILED, None
    else:
        delay = setting("KINDGI_WEBHOOK_BACKOFF_SECONDS") * 2 ** (delivery.attempts - 1)
        delivery.next_attempt_at = now + timedelta(seconds=delay)
        _schedule_retry(delivery)
    delivery.save(
        update_fields=[
            "attempts",
            "last_status_code",
            "last_error",
            "status",
            "delivered_at",
            "next_attempt_at",
        ]
    )


def _schedule_retry(delivery: WebhookDelivery) -> None:
    """Queue the retry where the task backend can defer it; otherwise `deliver_webhooks` sweeps it."""
    if default_task_backend.supports_defer:
        try:
            deliver_webhook.using(run_after=delivery.next_attempt_at).enqueue(str(delivery.pk))
        except Exception:
            # The attempt is still recorded; the sweeps deliver the retry when it is due.
            logger.warning("webhook delivery %s: its retry could not be queued", delivery.pk, exc_info=True)


def deliver_due_webhooks(*, now=None, limit: int | None = None) -> int:
    """Attempt every pending delivery whose time has come (at most ``limit``, the longest
    waiting first); return how many succeeded."""
    now = now or timezone.now()
    due = WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.PENDING, next_attempt_at__lte=now
    ).order_by("next_attempt_at")
    return sum(attempt_delivery(pk, now=now) for pk in list(due.values_list("pk", flat=True)[:limit]))
