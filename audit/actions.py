"""Writing the audit chain: ``record_change`` is called by each configuration change's ``do_``
function, inside that change's transaction, so the change and its record commit (or roll back)
together."""

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import models, transaction
from django.utils import timezone

from audit.chain import advance, content_hash, locked_head
from audit.models import AuditEntry, Chain
from core.rows import insert_rows
from core.secrets import scrub_secrets


def entry_hash(entry: AuditEntry) -> str:
    """The hash of what the entry says, and of the one before it."""
    return content_hash(
        {
            "tenant": str(entry.tenant_id),
            "sequence": entry.sequence,
            "actor": entry.actor_id,
            "actorName": entry.actor_name,
            "surface": entry.surface,
            "action": entry.action,
            "target": [entry.target_type, entry.target_id, entry.target_label],
            "before": entry.before,
            "after": entry.after,
            "at": entry.created_at.isoformat(),
            "previous": entry.previous_hash,
        }
    )


def _as_stored(value: Any) -> Any:
    """``value`` as the JSON column gives it back (so its hash is the same when it is read), with
    any secret in it scrubbed."""
    if value is None:
        return None
    return scrub_secrets(json.loads(json.dumps(value, default=str)))


def record_change(
    *,
    tenant,
    acting_user,
    surface: str,
    action: str,
    target_type: str,
    target_id: Any = "",
    target_label: str = "",
    before: Any = None,
    after: Any = None,
) -> AuditEntry:
    """Append the record of one configuration change to ``tenant``'s audit chain.

    Precondition: inside the transaction that makes the change (the chain's head is locked here
    until it ends)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("an audit entry is written in the transaction of the change it records")
    head = locked_head(tenant.pk, Chain.AUDIT)
    person = acting_user if acting_user is not None and acting_user.is_authenticated else None
    entry = AuditEntry(
        tenant_id=tenant.pk,
        sequence=head.sequence + 1,
        previous_hash=head.hash,
        actor_id=person.pk if person else None,
        actor_name=person.get_username() if person else "",
        surface=surface,
        action=action,
        target_type=target_type,
        target_id=str(target_id or ""),
        target_label=str(target_label)[:300],
        before=_as_stored(before),
        after=_as_stored(after),
        created_at=timezone.now(),
    )
    entry.hash = entry_hash(entry)
    insert_rows([entry])
    advance(head, sequence=entry.sequence, hash=entry.hash)
    return entry


@dataclass(frozen=True, kw_only=True)
class SettingKind:
    """A kind of a tenant's setting, as its audit entries tell of it: its noun (``rule``), what
    is kept of one (``snapshot``: its fields, never a secret) and the name a person knows it by."""

    noun: str
    snapshot: Callable[[Any], dict]
    label: Callable[[Any], str]


@transaction.atomic
def do_save_setting(
    instance, *, kind: SettingKind, tenant, acting_user, surface: str, save: Callable[[], None] | None = None
):
    """Save ``instance``, one of ``tenant``'s settings, scrubbed of provider keys, and record the
    change in the tenant's audit chain: what it was as stored (the row read again: a form may have
    set the new values on ``instance`` already) and what it is now. ``save``: how to save it, when more than
    ``instance.save()`` (a rule's named reviewers, say). Nothing is recorded when nothing changed.
    Joins the caller's transaction, if any (the admin's)."""
    stored = (
        None if instance._state.adding else type(instance)._default_manager.filter(pk=instance.pk).first()
    )
    before = kind.snapshot(stored) if stored is not None else None
    _scrub_text_fields(instance)
    (save or instance.save)()
    after = kind.snapshot(instance)
    if after != before:
        record_change(
            tenant=tenant,
            acting_user=acting_user,
            surface=surface,
            action=f"{kind.noun}.{'changed' if before is not None else 'created'}",
            target_type=kind.noun,
            target_id=instance.pk,
            target_label=kind.label(instance),
            before=before,
            after=after,
        )
    return instance


def _scrub_text_fields(instance) -> None:
    """No provider key is stored in a setting, whichever way it came in (a form's JSON may spell
    one with escapes that only decoding makes whole)."""
    for field in instance._meta.concrete_fields:
        if isinstance(field, models.CharField | models.TextField | models.JSONField):
            value = getattr(instance, field.attname)
            if value is not None:
                setattr(instance, field.attname, scrub_secrets(value))


@transaction.atomic
def do_delete_setting(instance, *, kind: SettingKind, tenant, acting_user, surface: str) -> None:
    """Delete ``instance``, one of ``tenant``'s settings, and record what it was."""
    before, target_id, named = kind.snapshot(instance), instance.pk, kind.label(instance)
    instance.delete()
    record_change(
        tenant=tenant,
        acting_user=acting_user,
        surface=surface,
        action=f"{kind.noun}.deleted",
        target_type=kind.noun,
        target_id=target_id,
        target_label=named,
        before=before,
    )
