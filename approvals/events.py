"""Approval events, told after commit to the tenant's webhook and to its open consoles and clients."""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from approvals.models import Approval, Decision
from approvals.webhooks import record_event
from approvals.wire import approval_json, decision_json

CREATED = "approval.created"
DECIDED = "approval.decided"
EXPIRED = "approval.expired"
CANCELLED = "approval.cancelled"


def approvals_group(tenant_id) -> str:
    return f"approvals.{tenant_id}"


def announce(approval: Approval, event: str, decision: Decision | None = None) -> None:
    """Call inside the transaction that changed ``approval``."""
    data = {"approval": approval_json(approval)}
    if decision is not None:
        data["decision"] = decision_json(decision)
    if event in (CREATED, DECIDED, EXPIRED):
        # The webhook's contract is created and decided; an expiry is a decision nobody made.
        record_event(approval.tenant_id, CREATED if event == CREATED else DECIDED, data)
    message = {"type": "approval.event", "event": event, **data}
    group = approvals_group(approval.tenant_id)

    def send():
        layer = get_channel_layer()
        if layer is not None:
            async_to_sync(layer.group_send)(group, message)

    transaction.on_commit(send)
