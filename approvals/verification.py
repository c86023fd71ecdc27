"""Checking a tenant's chains: its decisions and its audit entries, each against its head, and
every decided approval against the decision that settled it (``manage.py verify_chains``)."""

from dataclasses import dataclass, field

from approvals.chain import first_break
from approvals.models import Approval, ApprovalStatus, Decision
from audit.actions import entry_hash
from audit.chain import GENESIS, chain_first_break, head_break
from audit.models import AuditEntry, Chain, ChainHead

DECIDED = (
    ApprovalStatus.APPROVED,
    ApprovalStatus.REJECTED,
    ApprovalStatus.CHANGES_REQUESTED,
    ApprovalStatus.EXPIRED,
)


@dataclass
class TenantChains:
    """What ``verify_tenant`` found: each chain's head as kept, and the first problem, if any."""

    slug: str
    heads: dict[str, tuple[int, str]] = field(default_factory=dict)
    entries: dict[str, int] = field(default_factory=dict)
    problem: str | None = None


def verify_tenant(tenant) -> TenantChains:
    found = TenantChains(slug=tenant.slug)
    heads = {head.chain: head for head in ChainHead.objects.filter(tenant=tenant)}
    for chain in Chain.values:
        head = heads.get(chain)
        found.heads[chain] = (head.sequence, head.hash) if head else (0, GENESIS)
    found.problem = _decisions_problem(tenant, heads.get(Chain.DECISIONS), found) or _audit_problem(
        tenant, heads.get(Chain.AUDIT), found
    )
    return found


def _decisions_problem(tenant, head, found: TenantChains) -> str | None:
    decisions = list(Decision.objects.filter(tenant=tenant).order_by("sequence"))
    found.entries[Chain.DECISIONS] = len(decisions)
    if (broken := first_break(decisions)) is not None:
        return f"decision {broken.entry_id} (#{broken.sequence}): {broken.reason}"
    if (broken := head_break(decisions[-1] if decisions else None, head, what="decision")) is not None:
        return f"decisions: {broken.reason}"
    unsettled = (
        Approval.objects.filter(tenant=tenant, status__in=DECIDED, decision__isnull=True)
        .order_by("created_at")
        .first()
    )
    if unsettled is not None:
        return f"approval {unsettled.pk} is {unsettled.status} but has no decision: it was removed"
    return None


def _audit_problem(tenant, head, found: TenantChains) -> str | None:
    entries = list(AuditEntry.objects.filter(tenant=tenant).order_by("sequence"))
    found.entries[Chain.AUDIT] = len(entries)
    if (broken := chain_first_break(entries, entry_hash, what="audit entry")) is not None:
        return f"audit entry {broken.entry_id} (#{broken.sequence}): {broken.reason}"
    if (broken := head_break(entries[-1] if entries else None, head, what="audit entry")) is not None:
        return f"audit: {broken.reason}"
    return None
