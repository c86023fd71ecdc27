"""The decision log as a chain: each decision holds a SHA-256 over its content and the hash of
its tenant's decision before it, so that a decision changed (or removed) behind the
application's back shows, and ``verify_decisions`` can say which.

``do_append_decision`` is how every decision is written (a reviewer's, an expiry's); it locks
the tenant's row so that two decisions of one tenant cannot both follow the same one.
"""

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection

from approvals.models import Decision
from core.prepared import Param, Prepared
from core.rows import insert_rows
from tenants.models import Tenant

GENESIS = "sha256:" + "0" * 64

_TENANT_KEY = Param("tenant", Decision._meta.get_field("tenant"))
_CHAIN_END = Prepared(
    lambda: (
        Decision.objects.filter(tenant=_TENANT_KEY).order_by("-sequence").values_list("sequence", "hash")[:1]
    )
)
_TENANT_LOCKED = Prepared(
    lambda: Tenant.objects.select_for_update().filter(pk=Param("tenant", Tenant._meta.pk)).values_list("pk")
)


def decision_hash(decision: Decision) -> str:
    """The hash of what the decision says, and of the one before it."""
    content = {
        "tenant": str(decision.tenant_id),
        "sequence": decision.sequence,
        "approval": str(decision.approval_id),
        "decision": decision.decision,
        "rationale": decision.rationale,
        "reviewer": decision.reviewer_id,
        "reviewerName": decision.reviewer_name,
        "reviewerRole": decision.reviewer_role_at_decision,
        "arguments": decision.arguments,
        "decidedAt": decision.decided_at.isoformat(),
        "previous": decision.previous_hash,
    }
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def do_append_decision(*, approval, **fields: Any) -> Decision:
    """Write the next decision of ``approval``'s tenant, chained to the one before.

    Precondition: inside the decision's transaction (the run and the approval are locked)."""
    if connection.features.has_select_for_update:
        # Where rows are locked one by one (PostgreSQL); SQLite's writers take turns anyway.
        _TENANT_LOCKED.rows(tenant=approval.tenant_id)
    last = _CHAIN_END.one_or_none(tenant=approval.tenant_id)
    sequence, previous = (last[0] + 1, last[1]) if last else (1, GENESIS)
    decision = Decision(
        approval=approval, tenant_id=approval.tenant_id, sequence=sequence, previous_hash=previous, **fields
    )
    decision.hash = decision_hash(decision)
    insert_rows([decision])  # an audit record: written once, never saved again
    return decision


@dataclass(frozen=True, kw_only=True)
class Break:
    decision_id: int
    sequence: int
    reason: str


def first_break(decisions: Iterable[Decision]) -> Break | None:
    """The first decision of a tenant's chain (given in sequence order) that does not hold."""
    previous, expected = GENESIS, 1
    for decision in decisions:
        where = {"decision_id": decision.pk, "sequence": decision.sequence}
        if decision.sequence != expected:
            return Break(
                **where, reason=f"it is #{decision.sequence} where #{expected} should be: one is missing"
            )
        if decision.previous_hash != previous:
            return Break(
                **where, reason="it does not follow the decision before it (its previous hash differs)"
            )
        if decision_hash(decision) != decision.hash:
            return Break(
                **where, reason="its hash does not match its content: it was changed after it was written"
            )
        previous, expected = decision.hash, expected + 1
    return None
