"""The audit chain: one immutable entry for each configuration change, hash-chained per tenant,
and the heads of each tenant's chains (its decisions' and its audit entries')."""

from django.conf import settings
from django.db import models

from core.errors import DomainError


class ImmutableAuditError(DomainError):
    """An audit record was about to be changed or deleted through the application."""


class Surface(models.TextChoices):
    """Where a change came from."""

    API = "api", "the API"
    CLI = "cli", "the kindgi command line"
    CONSOLE = "console", "the console"
    ADMIN = "admin", "the Django admin"
    COMMAND = "command", "a manage.py command"
    SYSTEM = "system", "Kindgi itself"


class Chain(models.TextChoices):
    DECISIONS = "decisions"
    AUDIT = "audit"


class AuditEntry(models.Model):
    """Who changed what of a tenant's configuration, from where, what it was and became, and when.
    Never changed once written; each holds the hash of its content and of the entry before it."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="+")
    # Its place in the tenant's chain, from 1, without gaps.
    sequence = models.PositiveIntegerField()
    previous_hash = models.CharField(max_length=80)
    hash = models.CharField(max_length=80)
    # Who made the change: kept as their id and name, so that no later change to the user (not
    # even its deletion) touches the record. Empty for a change by a command or Kindgi itself.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        related_name="+",
    )
    actor_name = models.CharField(max_length=150, blank=True)
    surface = models.CharField(max_length=16, choices=Surface.choices)
    # What happened, as ``<noun>.<verb>`` (``rule.created``, ``reviewer.role-changed``).
    action = models.CharField(max_length=64)
    # What it happened to: its kind (``rule``), id and a name a person recognises.
    target_type = models.CharField(max_length=32)
    target_id = models.CharField(max_length=64, blank=True)
    target_label = models.CharField(max_length=300, blank=True)
    # The setting's fields before and after (null: it did not exist); secrets are never in them.
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        ordering = ["-sequence"]
        verbose_name_plural = "audit entries"
        indexes = [models.Index(fields=["tenant", "-sequence"])]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "sequence"], name="audit_entry_one_per_place"),
        ]

    def __str__(self) -> str:
        what = self.target_label or self.target_id
        return f"#{self.sequence} {self.action} {what} by {self.actor_name or 'the system'}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableAuditError(f"audit entry {self.pk} is a record and cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableAuditError(f"audit entry {self.pk} is a record and cannot be deleted")


class ChainHead(models.Model):
    """The last entry of one of a tenant's chains (its sequence and hash), moved in the same
    transaction as each entry is written. It is the chain's lock too: a writer takes it first, so
    two entries cannot follow the same one; and an outside system that keeps the heads it saw (from
    ``/metrics`` or ``verify_chains``) can tell entries that were removed from the end."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    chain = models.CharField(max_length=16, choices=Chain.choices)
    sequence = models.PositiveIntegerField(default=0)
    hash = models.CharField(max_length=80)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "chain"], name="audit_one_head_per_chain")]

    def __str__(self) -> str:
        return f"{self.chain} #{self.sequence} {self.hash}"
