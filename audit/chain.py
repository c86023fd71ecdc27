"""Hash chains, per tenant: each entry holds a SHA-256 over its content and the hash of the entry
before it, and the chain's head (``ChainHead``) holds the last one's sequence and hash.

A writer takes the head with ``locked_head`` (the chain's lock), writes its entry after it and
moves the head with ``advance``, all in one transaction. ``chain_first_break`` walks a chain and names
the first entry that does not hold; ``head_break`` compares its end with the head, so that an
entry removed from the end shows as well as one removed from the middle.
"""

import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.db import connection

from audit.models import Chain, ChainHead
from core.prepared import Param, Prepared
from core.rows import update_row

GENESIS = "sha256:" + "0" * 64


def content_hash(content: Mapping[str, Any]) -> str:
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


_HEAD = Param("tenant", ChainHead._meta.get_field("tenant"))
_HEAD_LOCKED = Prepared(
    lambda: (
        ChainHead.objects.select_for_update()
        .filter(tenant=_HEAD, chain=Param("chain", ChainHead._meta.get_field("chain")))
        .order_by()
    )
)
_HEAD_READ = Prepared(
    lambda: ChainHead.objects.filter(
        tenant=_HEAD, chain=Param("chain", ChainHead._meta.get_field("chain"))
    ).order_by()
)


def start_chains(sender, instance, created: bool = False, raw: bool = False, **kwargs) -> None:
    """A signal receiver for a new tenant: its chains' heads, at the genesis."""
    if created and not raw:
        ChainHead.objects.bulk_create(
            [
                ChainHead(tenant_id=instance.pk, chain=chain, sequence=0, hash=GENESIS)
                for chain in Chain.values
            ],
            ignore_conflicts=True,
        )


def locked_head(tenant_id, chain: str) -> ChainHead:
    """``chain``'s head for ``tenant_id``, locked until this transaction ends (made, at the
    genesis, for a tenant's first entry). Precondition: inside the entry's transaction."""
    # SQLite's writers take turns for the whole transaction: a plain read is as good as a lock.
    query = _HEAD_LOCKED if connection.features.has_select_for_update else _HEAD_READ
    head = query.one_or_none(tenant=tenant_id, chain=chain)
    if head is None:
        ChainHead.objects.bulk_create(
            [ChainHead(tenant_id=tenant_id, chain=chain, sequence=0, hash=GENESIS)], ignore_conflicts=True
        )
        head = query.one_or_none(tenant=tenant_id, chain=chain)
    return head


def advance(head: ChainHead, *, sequence: int, hash: str) -> None:
    """Move the locked ``head`` to the entry just written."""
    head.sequence, head.hash = sequence, hash
    update_row(head, ["sequence", "hash"])


@dataclass(frozen=True, kw_only=True)
class Break:
    entry_id: int | None
    sequence: int
    reason: str


def chain_first_break(
    entries: Iterable[Any], hash_of: Callable[[Any], str], *, what: str = "entry"
) -> Break | None:
    """The first of a tenant's chain's ``entries`` (given in sequence order) that does not hold:
    one missing before it, one that does not follow the one before it, or one whose content no
    longer matches its hash."""
    previous, expected = GENESIS, 1
    for entry in entries:
        where = {"entry_id": entry.pk, "sequence": entry.sequence}
        if entry.sequence != expected:
            return Break(
                **where, reason=f"it is #{entry.sequence} where #{expected} should be: one is missing"
            )
        if entry.previous_hash != previous:
            return Break(
                **where, reason=f"it does not follow the {what} before it (its previous hash differs)"
            )
        if hash_of(entry) != entry.hash:
            return Break(
                **where, reason="its hash does not match its content: it was changed after it was written"
            )
        previous, expected = entry.hash, expected + 1
    return None


def head_break(last: Any | None, head: ChainHead | None, *, what: str = "entry") -> Break | None:
    """Whether the chain's last entry (``last``, None for none) is where its head says it ends."""
    sequence, hash = (last.sequence, last.hash) if last is not None else (0, GENESIS)
    if head is None:
        if last is None:
            return None
        return Break(entry_id=last.pk, sequence=sequence, reason="the chain has no head: it was removed")
    if (head.sequence, head.hash) == (sequence, hash):
        return None
    if head.sequence > sequence:
        missing = head.sequence - sequence
        return Break(
            entry_id=None,
            sequence=head.sequence,
            reason=f"the head is #{head.sequence} but the chain ends at #{sequence}: "
            f"{missing} {what}{'s' if missing > 1 else ''} removed from the end",
        )
    return Break(
        entry_id=None,
        sequence=head.sequence,
        reason=f"the head (#{head.sequence} {head.hash}) does not match the chain's end (#{sequence} {hash})",
    )
