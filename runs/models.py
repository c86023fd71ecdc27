"""Runs of flows and agent turns, and the journal each run writes as it goes."""

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from core.tracing import traceparent_here
from runs.engine.entries import PAYLOADS, EntryKind

# The built-in flow that one agent turn runs as.
AGENT_TURN_FLOW_ID = "agent.turn"
AGENT_TURN_FLOW_VERSION = "1.1.0"


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    SUSPENDED = "suspended"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


class Trigger(models.TextChoices):
    """What started a run: a person (signed in, or with their own token), or not a person."""

    PERSON = "person"
    SERVICE = "service"
    MAIL = "mail"
    SCHEDULE = "schedule"


FINISHED_STATUSES = frozenset({RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})


# Every kind of journal entry, with what its payload holds (the engine defines them).
JournalKind = models.TextChoices(
    "JournalKind", [(kind.name, (kind.value, f"{kind.value}: {PAYLOADS[kind]}")) for kind in EntryKind]
)


class Run(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="runs")
    flow_key = models.CharField("flow id", max_length=200)
    flow_version = models.CharField(max_length=64)
    agent_key = models.CharField("agent id", max_length=200, blank=True)
    agent_version = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED)
    dry_run = models.BooleanField(default=False)
    read_only = models.BooleanField(default=False)
    input = models.JSONField(default=dict)
    output = models.JSONField(null=True, blank=True)
    failure_message = models.TextField(blank=True)
    parent = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="children"
    )
    parent_node_id = models.CharField(
        max_length=100, blank=True, help_text="The parent flow's node this run is the step of."
    )
    # A database default too, so that rows written by code older than this field still get one.
    trigger = models.CharField(
        max_length=16, choices=Trigger.choices, default=Trigger.PERSON, db_default=Trigger.PERSON
    )
    # The person who started it (trigger person); None for a run no person started.
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The person accountable for it (runs.principals): its starter, its schedule's or mailbox's
    # owner, or the person responsible for the service token that started it; a child run's is
    # its parent's. Empty only on runs older than principals that could not be attributed.
    principal = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    # The service account whose token started it (trigger service).
    service = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # In a run no person started: whose connection each app's calls use, as its start named them,
    # {app: {"userId": …, "username": …}}; each use still waits for that person's yes.
    connection_owners = models.JSONField(null=True, blank=True, default=dict)
    # An agent turn's conversation: user, assistant (with tool calls) and tool messages,
    # from the conversation's first turn to this one.
    messages = models.JSONField(default=list, blank=True)
    # The conversation an agent turn belongs to: its first turn's id.
    conversation_id = models.UUIDField(null=True, blank=True, db_index=True)
    # What a suspended run waits on; None otherwise.
    waitpoint = models.JSONField(null=True, blank=True)
    # The journal's last sequence; bumped under the run's row lock, so sequences have no gaps.
    last_sequence = models.PositiveIntegerField(default=0)
    # Which executor holds the run and until when (a worker that dies lets its claim expire).
    claim_token = models.CharField(max_length=64, blank=True)
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The W3C traceparent of the span the run's spans descend from (docs/operations.md, "Traces"):
    # the one current where the run was made (a request's, its parent run's step), or its first
    # execution's. Kept here so that an execution in another process, after a suspension, and the
    # run's approvals continue the same trace. Empty while traces are off, and in rows written by
    # code older than this field (its database default).
    trace_context = models.CharField(max_length=128, blank=True, default=traceparent_here, db_default="")

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["tenant", "status", "-created_at"]),
            models.Index(fields=["tenant", "flow_key", "-created_at"]),
            # What the recovery sweep looks for every round: runs no executor may be holding.
            models.Index(
                fields=["status", "updated_at"],
                condition=models.Q(status__in=["queued", "running"]),
                name="runs_run_awaiting_executor",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["parent", "parent_node_id"],
                condition=models.Q(parent__isnull=False),
                name="runs_run_one_child_per_parent_node",
            )
        ]

    def __str__(self) -> str:
        return f"{self.flow_key}@{self.flow_version} {self.id} ({self.status})"

    @property
    def is_agent_turn(self) -> bool:
        return self.flow_key == AGENT_TURN_FLOW_ID

    @property
    def agent_parameters(self) -> dict:
        """An agent turn's parameters, as given: its input but the user's message and the mail."""
        if not self.is_agent_turn:
            return {}
        return {
            name: value
            for name, value in self.input.items()
            if name not in ("userMessage", "mail") and value is not None  # None: not given
        }

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_STATUSES


class JournalEntry(models.Model):
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="journal")
    sequence = models.PositiveIntegerField()
    kind = models.CharField(max_length=32, choices=JournalKind.choices)
    node_id = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    duration_ms = models.PositiveIntegerField(null=True, blank=True)
    payload = models.JSONField(default=dict)

    class Meta:
        ordering = ["run", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["run", "sequence"], name="runs_journal_sequence_unique"),
            models.CheckConstraint(
                condition=models.Q(sequence__gte=1), name="runs_journal_sequence_from_one"
            ),
        ]
        verbose_name_plural = "journal entries"

    def __str__(self) -> str:
        return f"{self.run_id} #{self.sequence} {self.kind}"


class SweepLease(models.Model):
    """Who may run the periodic sweeps now: one holder at a time across every process and
    machine, until its lease expires (``runs.sweeper``)."""

    name = models.CharField(max_length=64, primary_key=True)
    holder = models.CharField(max_length=200, blank=True)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name}: {self.holder or 'nobody'} until {self.expires_at.isoformat()}"


class Schedule(models.Model):
    """A tenant's agent or flow, run on a cron expression with a fixed input, on behalf of its
    owner: no person starts its runs (``trigger: schedule``), so a use of the owner's
    connection waits for the owner's yes. Written through ``runs.schedules``."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="schedules")
    name = models.CharField(max_length=200)
    agent_key = models.CharField("agent id", max_length=200, blank=True)
    flow_key = models.CharField("flow id", max_length=200, blank=True)
    input = models.JSONField(default=dict, blank=True)
    cron = models.CharField(
        max_length=200, help_text="When it runs, in UTC, e.g. 0 9 * * 1-5 (09:00 on weekdays)."
    )
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    enabled = models.BooleanField(default=True)
    # The next tick to run; a tick missed while nothing ran is run once, then the next is in the future.
    next_run_at = models.DateTimeField(null=True, blank=True, db_index=True)
    last_run_at = models.DateTimeField(null=True, blank=True)
    last_run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tenant", "name"]
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="runs_schedule_name_per_tenant")
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.cron})"


class BudgetCharge(models.Model):
    """One call counted against one tenant rule's budget in one scope (``runs.budgets``): from
    when it passed the gate, until it turned out not to run."""

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    # The approval rule whose budget it counts against (the approvals app's; kept by id, as the
    # journal keeps a gate's rule).
    rule_id = models.PositiveBigIntegerField()
    # Which run, conversation, principal or agent the budget is kept for ("tenant": the tenant's).
    scope_key = models.CharField(max_length=200)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    call_id = models.CharField(max_length=200)
    amount = models.FloatField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rule_id", "run", "call_id"], name="runs_budget_charge_once")
        ]
        indexes = [models.Index(fields=["tenant", "rule_id", "scope_key", "created_at"])]

    def __str__(self) -> str:
        return f"rule {self.rule_id} {self.scope_key}: {self.call_id} ({self.amount})"
