"""Reads of the audit chain and of the chains' heads."""

from audit.chain import GENESIS
from audit.models import AuditEntry, Chain, ChainHead


def audit_list_for_tenant(
    tenant, *, action=None, actor=None, surface=None, target_type=None, since=None, until=None
):
    """``tenant``'s audit entries, newest first, filtered: ``action`` an action (``rule.created``)
    or a noun for all of its (``rule``)."""
    entries = AuditEntry.objects.filter(tenant=tenant)
    if action:
        entries = (
            entries.filter(action=action)
            if "." in action
            else entries.filter(action__startswith=f"{action}.")
        )
    if actor:
        entries = entries.filter(actor_name=actor)
    if surface:
        entries = entries.filter(surface=surface)
    if target_type:
        entries = entries.filter(target_type=target_type)
    if since:
        entries = entries.filter(created_at__gte=since)
    if until:
        entries = entries.filter(created_at__lt=until)
    return entries.order_by("-created_at", "-sequence")


def chain_heads(tenant) -> dict[str, dict]:
    """Each of ``tenant``'s chains' head: ``{chain: {"sequence", "hash"}}`` (the genesis for one
    with no entry yet)."""
    heads = {chain: {"sequence": 0, "hash": GENESIS} for chain in Chain.values}
    for head in ChainHead.objects.filter(tenant=tenant):
        heads[head.chain] = {"sequence": head.sequence, "hash": head.hash}
    return heads


def audit_actors(tenant) -> list[str]:
    return list(
        AuditEntry.objects.filter(tenant=tenant)
        .exclude(actor_name="")
        .order_by("actor_name")
        .values_list("actor_name", flat=True)
        .distinct()
    )


def audit_target_types(tenant) -> list[str]:
    return list(
        AuditEntry.objects.filter(tenant=tenant)
        .order_by("target_type")
        .values_list("target_type", flat=True)
        .distinct()
    )
