"""The decision log as a chain: each decision holds a SHA-256 over its content and the hash of
its tenant's decision before it, and the tenant's decisions head (``audit.models.ChainHead``)
the last one's, so that a decision changed or removed behind the application's back, from the
middle or from the end, shows, and ``verify_chains`` can say which.

``do_append_decision`` is how every decision is written (a reviewer's, an expiry's); it takes
the head first, so that two decisions of one tenant cannot both follow the same one.
"""

from collections.abc import Iterable
from typing import Any

from approvals.models import Decision
from audit import chain
from audit.models import Chain
from core.rows import insert_rows

GENESIS = chain.GENESIS


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
    return chain.content_hash(content)


def do_append_decision(*, approval, **fields: Any) -> Decision:
    """Write the next decision of ``approval``'s tenant, chained to the one before, and move the
    chain's head to it.

    Precondition: inside the decision's transaction (the run and the approval are locked); the
    tenant's decisions head is locked here until it commits."""
    head = chain.locked_head(approval.tenant_id, Chain.DECISIONS)
    decision = Decision(
        approval=approval,
        tenant_id=approval.tenant_id,
        sequence=head.sequence + 1,
        previous_hash=head.hash,
        **fields,
    )
    decision.hash = decision_hash(decision)
    insert_rows([decision])  # an audit record: written once, never saved again
    chain.advance(head, sequence=decision.sequence, hash=decision.hash)
    return decision


def first_break(decisions: Iterable[Decision]) -> chain.Break | None:
    """The first decision of a tenant's chain (given in sequence order) that does not hold."""
    return chain.chain_first_break(decisions, decision_hash, what="decision")
