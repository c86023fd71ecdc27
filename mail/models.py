"""Mailboxes, the mail they receive and send, and the mail they refuse.

A mailbox is a tenant's address whose incoming mail starts runs of one agent or flow; it has an
owner, the person whose yes a run it started needs before it reads the mailbox's mail.
"""

import uuid

from django.conf import settings
from django.db import models

DEFAULT_SIZE_LIMIT = 10 * 1024 * 1024


class Mailbox(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="mailboxes")
    # Kept lower-case: mail is addressed to it case-insensitively.
    address = models.EmailField(unique=True)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="mailboxes")
    agent_key = models.CharField("agent id", max_length=200, blank=True, help_text="The agent a mail starts.")
    flow_key = models.CharField(
        "flow id", max_length=200, blank=True, help_text="Or the flow a mail starts (its input takes mail)."
    )
    allowed_senders = models.JSONField(
        default=list,
        blank=True,
        help_text='Addresses or globs ("*@example.com", or a bare domain "example.com"); empty: anyone.',
    )
    size_limit = models.PositiveIntegerField("size limit (bytes)", default=DEFAULT_SIZE_LIMIT)
    require_dkim = models.BooleanField(
        "require DKIM",
        default=False,
        help_text="Refuse mail without a valid DKIM signature of its sender's domain.",
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["address"]
        verbose_name_plural = "mailboxes"

    def __str__(self) -> str:
        return self.address

    @property
    def target(self) -> str:
        return self.agent_key or self.flow_key


class MailMessage(models.Model):
    """A mail a mailbox received, or sent (a reply, or a new mail, from its tools)."""

    class Direction(models.TextChoices):
        IN = "in", "received"
        OUT = "out", "sent"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.PROTECT, related_name="+")
    mailbox = models.ForeignKey(Mailbox, on_delete=models.CASCADE, related_name="messages")
    direction = models.CharField(max_length=3, choices=Direction.choices)
    message_id = models.CharField(max_length=998)
    in_reply_to = models.CharField(max_length=998, blank=True)
    references = models.JSONField(default=list, blank=True)
    from_address = models.CharField(max_length=998)
    to = models.JSONField(default=list)
    subject = models.CharField(max_length=998, blank=True)
    text = models.TextField(blank=True)
    html = models.TextField(blank=True)
    # Every header, in order: [[name, value], …].
    headers = models.JSONField(default=list)
    size = models.PositiveIntegerField(default=0)
    # The run the mail started (received), or that sent it.
    run = models.ForeignKey("runs.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # The thread's conversation: a reply continues it.
    conversation_id = models.UUIDField(null=True, blank=True, db_index=True)
    # Why a received mail started no run, though it was accepted (its agent could not start, say).
    note = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["mailbox", "message_id"], name="mail_one_message_per_id")
        ]
        indexes = [models.Index(fields=["mailbox", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_direction_display()}: {self.subject or '(no subject)'}"


class MailAttachment(models.Model):
    """A received mail's attachment: stored as bytes, never opened or run."""

    message = models.ForeignKey(MailMessage, on_delete=models.CASCADE, related_name="attachments")
    filename = models.CharField(max_length=255, blank=True)
    content_type = models.CharField(max_length=255)
    size = models.PositiveIntegerField()
    content = models.BinaryField()

    def __str__(self) -> str:
        return f"{self.filename or '(unnamed)'} ({self.content_type}, {self.size} bytes)"


class MailRefusal(models.Model):
    """A mail that started nothing, and why: refused with an SMTP error, or accepted and not
    answered (a duplicate, an auto-reply, bulk mail, a bounce, a loop)."""

    class Reason(models.TextChoices):
        TOO_BIG = "too-big", "over the mailbox's size limit"
        SENDER_NOT_ALLOWED = "sender-not-allowed", "sender not allowed"
        DKIM_FAILED = "dkim-failed", "no valid DKIM signature"
        DUPLICATE = "duplicate", "a duplicate (same Message-ID)"
        AUTO_REPLY = "auto-reply", "an automatic reply"
        BULK = "bulk", "bulk or list mail"
        BOUNCE = "bounce", "a bounce (null sender or mailer daemon)"
        LOOP = "loop", "Kindgi's own mail (a loop)"
        UNREADABLE = "unreadable", "not a readable mail"

    mailbox = models.ForeignKey(Mailbox, on_delete=models.CASCADE, related_name="refusals")
    reason = models.CharField(max_length=32, choices=Reason.choices)
    detail = models.TextField(blank=True)
    # What the sender was answered: an SMTP reply code (250: accepted, but not answered).
    smtp_code = models.PositiveIntegerField()
    sender = models.CharField(max_length=998, blank=True)
    message_id = models.CharField(max_length=998, blank=True)
    subject = models.CharField(max_length=998, blank=True)
    size = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["mailbox", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.get_reason_display()} ({self.smtp_code})"
