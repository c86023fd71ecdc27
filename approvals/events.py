"""Approval events, told after commit to the tenant's webhook and to its open consoles and clients."""

import json
from functools import cache

from django.db import transaction

from approvals.models import Approval, Decision
from approvals.webhooks import record_event
from approvals.wire import approval_json, decision_json
from core.channels import send_to_groups

CREATED = "approval.created"
DECIDED = "approval.decided"
# One approval given toward the several a call needs; it still waits.
APPROVED_IN_PART = "approval.approved_in_part"
EXPIRED = "approval.expired"
CANCELLED = "approval.cancelled"


def approvals_group(tenant_id) -> str:
    return f"approvals.{tenant_id}"


def announce(approval: Approval, event: str, decision: Decision | None = None) -> None:
    """Call inside the transaction that changed ``approval``, after changing it.

    The event's JSON is made only if someone will receive it: a webhook, or a listener."""

    @cache
    def data() -> dict:
        made = {"approval": approval_json(approval)}
        if decision is not None:
            made["decision"] = decision_json(decision)
        return made

    if event in (CREATED, DECIDED, EXPIRED):
        # The webhook's contract is created and decided; an expiry is a decision nobody made.
        record_event(
            approval.tenant_id,
            CREATED if event == CREATED else DECIDED,
            data,
            config_version=approval.tenant.config_version if Approval.tenant.is_cached(approval) else None,
        )
    group = approvals_group(approval.tenant_id)
    transaction.on_commit(
        lambda: send_to_groups(
            [group],
            lambda: [
                {
                    "type": "approval.event",
                    "approvalId": str(approval.pk),
                    "text": json.dumps({**data(), "type": event}),
                }
            ],
        )
    )
