"""Reviewers, the approvals that wait for them, and their decisions."""

import uuid

from django.conf import settings
from django.db import models

from approvals.exceptions import ImmutableRecordError

SUBJECT_KIND_PENDING_TOOL_CALL = "tool-call:pending"


class Reviewer(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviewer")
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="reviewers")
    role = models.CharField(max_length=32)
    display_name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["display_name"]

    def __str__(self) -> str:
        return f"{self.display_name} ({self.role})"


class ApprovalStatus(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class Approval(models.Model):
    """A pending decision about one tool call of one run."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="approvals")
    # The agent's own run: the one that waits.
    run = models.ForeignKey("runs.Run", on_delete=models.PROTECT, related_name="approvals")
    call_id = models.CharField(max_length=200)
    tool_key = models.CharField("tool id", max_length=200)
    tool_version = models.CharField(max_length=64)
    agent_key = models.CharField("agent id", max_length=200)
    agent_version = models.CharField(max_length=64)
    # The exact arguments the model chose, validated against the tool's input schema.
    arguments = models.JSONField(default=dict)
    required_role = models.CharField(max_length=32)
    status = models.CharField(max_length=16, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING)
    # The gate decision that asked for this approval, with its reason.
    gate = models.JSONField(default=dict)
    expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["tenant", "status", "-created_at"])]
        constraints = [models.UniqueConstraint(fields=["run", "call_id"], name="approvals_one_per_tool_call")]

    def __str__(self) -> str:
        return f"{self.title} ({self.status})"

    @property
    def subject_kind(self) -> str:
        return SUBJECT_KIND_PENDING_TOOL_CALL

    @property
    def title(self) -> str:
        return f"HITL review: {self.tool_key}"

    @property
    def subject_ref(self) -> dict:
        return {
            "runId": str(self.run_id),
            "toolId": self.tool_key,
            "toolVersion": self.tool_version,
            "agentId": self.agent_key,
            "callId": self.call_id,
            "arguments": self.arguments,
        }

    @property
    def provenance_ref(self) -> dict:
        return {"runId": str(self.run_id)}


class DecisionKind(models.TextChoices):
    APPROVE = "approve"
    REJECT = "reject"


class Decision(models.Model):
    """Who decided an approval, in which role, when, what and why. Never changed once written."""

    approval = models.OneToOneField(Approval, on_delete=models.PROTECT, related_name="decision")
    decision = models.CharField(max_length=16, choices=DecisionKind.choices)
    rationale = models.TextField(blank=True)
    # None when no person decided (an expired approval).
    reviewer = models.ForeignKey(Reviewer, null=True, blank=True, on_delete=models.PROTECT, related_name="+")
    reviewer_name = models.CharField(max_length=200, blank=True)
    reviewer_role_at_decision = models.CharField(max_length=32, blank=True)
    # The arguments the reviewer approved, when they edited the model's.
    arguments = models.JSONField(null=True, blank=True)
    decided_at = models.DateTimeField()

    class Meta:
        ordering = ["-decided_at"]

    def __str__(self) -> str:
        return f"{self.decision} by {self.reviewer_name or 'nobody'}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRecordError(f"decision {self.pk} is an audit record and cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableRecordError(f"decision {self.pk} is an audit record and cannot be deleted")
