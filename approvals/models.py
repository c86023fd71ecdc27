"""Reviewers, the approvals that wait for them, and their decisions."""

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import models

from approvals.exceptions import ImmutableRecordError
from approvals.words import why_it_asks
from kindgi.gates import RULE_GATE_LABELS
from kindgi.summaries import fallback_summary
from runs.engine.waitpoints import CONNECTION_USE, INTERRUPTED_TOOL_CALL, PENDING_TOOL_CALL


class Reviewer(models.Model):
    class Notify(models.TextChoices):
        IMMEDIATELY = "immediately", "a mail for each approval, at once"
        DIGEST = "digest", "one mail of everything new, every few minutes"
        NONE = "none", "no mail (the console only)"

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="reviewer")
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="reviewers")
    role = models.CharField(max_length=32)
    display_name = models.CharField(max_length=200)
    # How this reviewer hears of approvals they may decide (approvals.notifications).
    notify = models.CharField(max_length=16, choices=Notify.choices, default=Notify.IMMEDIATELY)
    digest_minutes = models.PositiveIntegerField(default=15)
    # When their next digest may go (None: with the next sweep).
    next_digest_at = models.DateTimeField(null=True, blank=True)
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
    # A reviewer asked the model for another call instead (the call did not run).
    CHANGES_REQUESTED = "changes_requested"
    EXPIRED = "expired"
    CANCELLED = "cancelled"


class Approval(models.Model):
    """A pending decision about one tool call of one run: an agent's call, or a flow's tool step."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="approvals")
    # The run that waits: the agent's own run, or the flow run whose tool step it is.
    run = models.ForeignKey("runs.Run", on_delete=models.PROTECT, related_name="approvals")
    call_id = models.CharField(max_length=200)
    subject_kind = models.CharField(
        max_length=32,
        default=PENDING_TOOL_CALL,
        choices=[
            (PENDING_TOOL_CALL, "a call waiting to run"),
            # A call that started but whose result was never recorded (its executor died).
            (INTERRUPTED_TOOL_CALL, "an interrupted call"),
            # In a run no person started: the yes of the person whose connection the call uses.
            (CONNECTION_USE, "the use of a person's connection"),
        ],
    )
    tool_key = models.CharField("tool id", max_length=200)
    tool_version = models.CharField(max_length=64)
    # Empty for a flow's tool step.
    agent_key = models.CharField("agent id", max_length=200, blank=True)
    agent_version = models.CharField(max_length=64, blank=True)
    # For a flow's tool step: the flow and the step. Empty for an agent's call.
    flow_key = models.CharField("flow id", max_length=200, blank=True)
    node_id = models.CharField(max_length=100, blank=True)
    # The exact arguments the model (or the flow) chose, validated against the tool's input schema.
    arguments = models.JSONField(default=dict)
    # What an approval binds: the digest of the tool id, version and arguments. The call that
    # runs after the decision must match the digest it approved.
    digest = models.CharField(max_length=80)
    # The call in a sentence, as its tool sums it up (``kindgi.summaries``): what people read first.
    summary = models.CharField(max_length=500, blank=True)
    # The principal of the run that waits (runs.principals): under four-eyes, not its decider.
    principal = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    required_role = models.CharField(max_length=32)
    status = models.CharField(max_length=24, choices=ApprovalStatus.choices, default=ApprovalStatus.PENDING)
    # The gate decision that asked for this approval, with its reason.
    gate = models.JSONField(default=dict)
    # When a rule names reviewers, only these users may decide (and they still need the role).
    reviewer_ids = models.JSONField(default=list, blank=True)
    # For a connection:use approval: {"app", "ownerId", "owner", "label"?}, the connection the call
    # would use; its owner alone decides.
    connection = models.JSONField(null=True, blank=True)
    # Two-person (M-of-N) approvals: how many distinct reviewers must approve before the call
    # runs, and those who have so far, in order ({userId, reviewer, role, decidedAt}): a copy of
    # their decisions, kept on the row so that the decision rights and every list read it at once.
    # An approval given below a role that escalation then raised the approval to no longer
    # counts: it stays, marked {superseded: true, supersededAt, supersededReason}.
    required_approvals = models.PositiveSmallIntegerField(default=1)
    approvals_given = models.JSONField(default=list, blank=True)
    # The decision that settled it (a rejection, the last approval needed, an expiry); each
    # approval before it is a decision of its own, in ``decisions``.
    decision = models.OneToOneField(
        "Decision", null=True, blank=True, on_delete=models.PROTECT, related_name="settles"
    )
    expires_at = models.DateTimeField(null=True, blank=True)
    # When its eligible deciders' notifications were written: by the sweeper, soon after it was
    # made, so that suspending a run does not wait on working out who to tell.
    notified_at = models.DateTimeField(null=True, blank=True)
    # When its eligible deciders were reminded that it is about to expire.
    reminded_at = models.DateTimeField(null=True, blank=True)
    # Its rule's escalation steps as they were when it was made (approvals.escalation), how many
    # have been taken, and when the next is due (None: no step left).
    escalation = models.JSONField(default=list, blank=True)
    escalation_done = models.PositiveSmallIntegerField(default=0)
    escalation_due_at = models.DateTimeField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["tenant", "status", "-created_at"]),
            # The queue's count and its filters' choices, read from the index alone: at 10,000
            # waiting, reading the rows themselves was most of the queue page's time.
            models.Index(
                fields=["tenant", "status", "agent_key", "tool_key", "expires_at"],
                name="approvals_queue_filters",
            ),
            models.Index(
                fields=["created_at"],
                condition=models.Q(notified_at__isnull=True),
                name="approvals_to_notify",
            ),
        ]
        constraints = [
            # One of each subject per call: a call may wait for its approval, and then, if its
            # executor dies while it runs, for a decision on repeating it.
            models.UniqueConstraint(
                fields=["run", "call_id", "subject_kind"], name="approvals_one_per_tool_call_and_subject"
            )
        ]

    def __str__(self) -> str:
        return f"{self.title} ({self.status})"

    @property
    def approver_ids(self) -> list[int]:
        """Everyone who approved it, superseded or not: a reviewer decides an approval once."""
        return [given["userId"] for given in self.approvals_given]

    @property
    def approvals_counted(self) -> list[dict]:
        """The approvals given that count toward ``required_approvals``: not superseded."""
        return [given for given in self.approvals_given if not given.get("superseded")]

    @property
    def approvals_superseded(self) -> list[dict]:
        """The approvals given that no longer count: escalation raised the role above theirs."""
        return [given for given in self.approvals_given if given.get("superseded")]

    @property
    def approvals_missing(self) -> int:
        """How many more approvals the call needs before it runs (superseded ones not counted)."""
        return max(self.required_approvals - len(self.approvals_counted), 0)

    @property
    def escalation_started_at(self) -> datetime | None:
        """When its escalation's clock started (as it was made): each step is due so many
        seconds after. None once no step is left."""
        left = self.escalation[self.escalation_done :]
        if not left or self.escalation_due_at is None:
            return None
        return self.escalation_due_at - timedelta(seconds=left[0]["afterSeconds"])

    @property
    def escalation_ahead(self) -> list[tuple[datetime, dict]]:
        """The escalation steps not taken yet, each with when it is due."""
        started = self.escalation_started_at
        left = self.escalation[self.escalation_done :] if started else []
        return [(started + timedelta(seconds=step["afterSeconds"]), step) for step in left]

    @property
    def title(self) -> str:
        """The seeds' heading (``HITL review: <tool>``), kept as they say it; ``summary`` is the
        sentence people read first."""
        if self.subject_kind == INTERRUPTED_TOOL_CALL:
            return f"Interrupted call: {self.tool_key}"
        if self.subject_kind == CONNECTION_USE:
            connection = self.connection
            which = f" ({connection['label']})" if connection.get("label") else ""
            return f"Use of {connection['owner']}'s {connection['app']} connection{which}: {self.tool_key}"
        return f"HITL review: {self.tool_key}"

    @property
    def said(self) -> str:
        """The call in a sentence: its ``summary``, or, for an approval made before summaries,
        its tool and arguments."""
        return self.summary or fallback_summary(f"Calls {self.tool_key}", self.arguments)

    @property
    def why(self) -> str:
        """Why the gate asks, in words (the record's ``reason`` stays in ``gate``)."""
        return why_it_asks((self.gate or {}).get("reason", ""))

    @property
    def may_request_changes(self) -> bool:
        """Whether a model proposed the call, so that a reviewer can send it back for changes
        (a flow's step, a repeat of an interrupted call or a connection's use cannot be)."""
        return self.subject_kind == PENDING_TOOL_CALL and bool(self.agent_key)

    @property
    def decisions_offered(self) -> list[str]:
        """The decisions a person may take on it, in the order surfaces offer them."""
        offered = [DecisionKind.APPROVE.value]
        if self.may_request_changes:
            offered.append(DecisionKind.REQUEST_CHANGES.value)
        return [*offered, DecisionKind.REJECT.value]

    @property
    def connection_owner_id(self) -> int | None:
        return self.connection["ownerId"] if self.connection else None

    @property
    def subject_ref(self) -> dict:
        ref = {
            "runId": str(self.run_id),
            "toolId": self.tool_key,
            "toolVersion": self.tool_version,
            "agentId": self.agent_key or None,
            "flowId": self.flow_key or None,
            "nodeId": self.node_id or None,
            "callId": self.call_id,
            "arguments": self.arguments,
        }
        if self.connection:
            ref["connection"] = {
                key: self.connection[key] for key in ("app", "owner", "label") if key in self.connection
            }
        return ref

    @property
    def provenance_ref(self) -> dict:
        return {"runId": str(self.run_id)}


class DecisionKind(models.TextChoices):
    APPROVE = "approve"
    REJECT = "reject"
    # The call does not run; the model is told what to change and may propose another.
    REQUEST_CHANGES = "request_changes"


class Decision(models.Model):
    """Who decided an approval, in which role, when, what and why. Never changed once written,
    and chained: each holds the hash of its content and of its tenant's decision before it
    (``approvals.chain``). Most approvals have one; one that needs several approvals has one per
    reviewer who approved, and its last (or a rejection, or its expiry) settles it."""

    approval = models.ForeignKey(Approval, on_delete=models.PROTECT, related_name="decisions")
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="+")
    # Its place in the tenant's chain, from 1, without gaps.
    sequence = models.PositiveIntegerField()
    previous_hash = models.CharField(max_length=80)
    hash = models.CharField(max_length=80)
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
        constraints = [
            models.UniqueConstraint(fields=["tenant", "sequence"], name="approvals_decision_one_per_place"),
            # A reviewer decides an approval once: two approvals need two people.
            models.UniqueConstraint(
                fields=["approval", "reviewer"],
                condition=models.Q(reviewer__isnull=False),
                name="approvals_decision_one_per_reviewer",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.decision} by {self.reviewer_name or 'nobody'}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRecordError(f"decision {self.pk} is an audit record and cannot be changed")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ImmutableRecordError(f"decision {self.pk} is an audit record and cannot be deleted")


class ApprovalRule(models.Model):
    """A tenant's rule for the calls it matches. The most specific matching rule gives the
    tenant's gate (runs.engine.gates.Rule.precedence says how specificity is judged), and a call
    runs under the stricter of that and the agent's own gate. Written only through
    ``approvals.actions.rules.check_save_rule``, which validates it."""

    Gate = models.TextChoices(
        "Gate", [(gate.name, (gate.value, label)) for gate, label in RULE_GATE_LABELS.items()]
    )

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="approval_rules")
    name = models.CharField(max_length=200)
    tool_pattern = models.CharField(
        "tools", max_length=200, default="*", help_text="Glob on the tool id, e.g. acme-ops.* (* for any)."
    )
    agent_pattern = models.CharField(
        "agents", max_length=200, default="*", help_text="Glob on the agent id (* for any)."
    )
    effect_kind = models.CharField(
        max_length=32, blank=True, help_text="Only tools with an effect of this kind (empty for any)."
    )
    resource_pattern = models.CharField(
        "resources",
        max_length=200,
        blank=True,
        help_text="Glob on an effect's resource, e.g. external:* (empty for any).",
    )
    condition = models.CharField(
        max_length=500,
        blank=True,
        help_text="Match only when this holds on the call's arguments, e.g. /amountCents > 10000.",
    )
    gate = models.CharField(
        max_length=16,
        choices=Gate.choices,
        help_text="The tenant's gate for the calls this rule matches. A call runs under the stricter of "
        "this and its agent's own gate: deny always wins, an ask from either side asks (needing the "
        "higher role), and an agent's never_ask cannot lift this rule's ask or deny.",
    )
    required_role = models.CharField(max_length=32, blank=True, help_text="Empty: the lowest role.")
    reviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        blank=True,
        related_name="+",
        help_text="If any are named, only they may decide (and still need the role).",
    )
    ttl_seconds = models.PositiveIntegerField(
        null=True, blank=True, help_text="Seconds until its approvals expire (empty: the site's default)."
    )
    reason = models.CharField(max_length=500, blank=True, help_text="Told to the model when the gate denies.")
    required_approvals = models.PositiveSmallIntegerField(
        default=1,
        help_text="How many distinct reviewers must approve a call before it runs (any one rejection "
        "rejects it).",
    )
    step_up = models.BooleanField(
        default=False,
        help_text="A decision on its approvals needs the reviewer's passkey first (console and mail "
        "links only; API tokens and the CLI are refused).",
    )
    escalation = models.JSONField(
        default=list,
        blank=True,
        help_text='Steps taken while its approvals wait, in order, e.g. [{"afterSeconds": 60, "raiseRole": '
        '"senior"}, {"afterSeconds": 90, "notify": ["ops-lead"]}, {"afterSeconds": 100, "addReviewers": '
        '["bo"]}, {"afterSeconds": 120, "expire": true}]: seconds from when the approval was made.',
    )
    after = models.JSONField(
        null=True,
        blank=True,
        help_text='Match only after this ran before the call, e.g. {"outsideData": true}, {"effect": '
        '"network"} or {"toolPattern": "mail.*"}; with "scope": "conversation" over the conversation\'s '
        "earlier turns too (else the run). Empty: whatever ran before.",
    )
    budget = models.JSONField(
        null=True,
        blank=True,
        help_text='A total the calls it matches may not pass without its overBudget gate, e.g. {"scope": '
        '"run", "sumOf": "/amountCents", "maxSum": 100000, "overBudget": "always_ask"}; scope one of run, '
        "conversation, principal, agent, tenant; windowSeconds (else the scope's whole life); maxCalls. "
        "Empty: no budget.",
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["tenant", "name"]

    def __str__(self) -> str:
        return self.name


class Webhook(models.Model):
    """Where a tenant's approval events are POSTed, signed with its secret as Standard Webhooks
    signs (``kindgi.webhooks``)."""

    tenant = models.OneToOneField("tenants.Tenant", on_delete=models.CASCADE, related_name="webhook")
    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=200, help_text="Shared with the receiver; never shown again.")
    # The secret being replaced: deliveries are signed with both until it is forgotten, so that
    # receivers can move to the new one at their pace (kindgi.webhooks).
    previous_secret = models.CharField(max_length=200, blank=True, default="")
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.tenant}: {self.url}"


class WebhookDelivery(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        SUCCEEDED = "succeeded"
        FAILED = "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    webhook = models.ForeignKey(Webhook, on_delete=models.CASCADE, related_name="deliveries")
    event = models.CharField(max_length=64)
    payload = models.JSONField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_status_code = models.PositiveIntegerField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "next_attempt_at"])]
        verbose_name_plural = "webhook deliveries"

    def __str__(self) -> str:
        return f"{self.event} ({self.status}, {self.attempts} attempt(s))"


class Notification(models.Model):
    """A mail to one person about one approval, kept until it is sent (an outbox): written in
    the transaction that made the approval (or reached its reminder), sent after it commits."""

    class Kind(models.TextChoices):
        CREATED = "created"
        REMINDER = "reminder"
        # An escalation step asked for it: sent whatever the person chose, links only if they may decide.
        ESCALATED = "escalated"

    approval = models.ForeignKey(Approval, on_delete=models.CASCADE, related_name="notifications")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # For an escalation: which step (from 1); 0 otherwise.
    step = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set once sent, or once there was nothing left to send (decided, or the person may not decide).
    done_at = models.DateTimeField(null=True, blank=True)
    sent = models.BooleanField(default=False)
    attempts = models.PositiveIntegerField(default=0)
    # After a failed attempt: not before then (the wait doubles each time).
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)

    class Meta:
        ordering = ["created_at"]
        indexes = [models.Index(fields=["done_at", "created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["approval", "user", "kind", "step"], name="approvals_one_notification_each"
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} for {self.user} about {self.approval_id}"


class DecisionLink(models.Model):
    """A one-time link in a notification: deciding ``action`` on one approval as one person.
    Only the SHA-256 of its token is kept; the token itself exists only in the mail."""

    approval = models.ForeignKey(Approval, on_delete=models.CASCADE, related_name="links")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=16, choices=DecisionKind.choices)
    token_hash = models.CharField(max_length=64, unique=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.action} link for {self.user} on {self.approval_id}"


class Grant(models.Model):
    """A reviewer's standing grant: calls like one they would approve may run without asking, for
    a while and up to a number (``runs.engine.grants`` says which calls it covers). Written only
    through ``approvals.actions.grants``; its uses are counted by ``approvals.grants.Grants``."""

    class Scope(models.TextChoices):
        PRINCIPAL = "principal", "one principal's runs"
        AGENT = "agent", "one agent's calls"

    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="grants")
    granter = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    tool_pattern = models.CharField(max_length=200, help_text="Glob on the tool id.")
    agent_pattern = models.CharField(max_length=200, default="*", help_text="Glob on the agent id.")
    condition = models.CharField(
        max_length=500, blank=True, help_text="Only when this holds on the arguments."
    )
    scope = models.CharField(max_length=16, choices=Scope.choices)
    # With the principal scope: whose runs. With the agent scope: which agent's calls.
    principal = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    agent_id = models.CharField(max_length=200, blank=True)
    max_calls = models.PositiveIntegerField(null=True, blank=True)
    sum_of = models.CharField(max_length=200, blank=True)
    max_sum = models.FloatField(null=True, blank=True)
    expires_at = models.DateTimeField()
    # The approval it was given with, if it was.
    approval = models.ForeignKey(Approval, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    uses = models.PositiveIntegerField(default=0)
    used_sum = models.FloatField(default=0)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["tenant", "expires_at"])]

    def __str__(self) -> str:
        return f"grant {self.pk}: {self.tool_pattern} by {self.granter_id}"

    def status_at(self, now: datetime) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.expires_at <= now:
            return "expired"
        if (self.max_calls is not None and self.uses >= self.max_calls) or (
            self.max_sum is not None and self.used_sum >= self.max_sum
        ):
            return "used up"
        return "active"


class GrantUse(models.Model):
    """One call a grant let run (counted once, whatever replays the call)."""

    grant = models.ForeignKey(Grant, on_delete=models.CASCADE, related_name="grant_uses")
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    call_id = models.CharField(max_length=200)
    amount = models.FloatField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["grant", "run", "call_id"], name="approvals_grant_use_once")
        ]

    def __str__(self) -> str:
        return f"grant {self.grant_id}: {self.call_id} of run {self.run_id}"


class StepUpChallenge(models.Model):
    """A WebAuthn challenge bound to one decision: one reviewer, one approval (its digest) and one
    decision. Used once; a passkey's answer to any other challenge decides nothing."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    approval = models.ForeignKey(Approval, on_delete=models.CASCADE, related_name="+")
    decision = models.CharField(max_length=16, choices=DecisionKind.choices)
    # base64url of SHA-256(nonce, approval id, digest, decision): what the passkey signs over.
    challenge = models.CharField(max_length=100, unique=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.decision} of {self.approval_id} by {self.user}"
