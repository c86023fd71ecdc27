"""Mailboxes, their mail and what they refused, on the wire, camelCase."""

from django.contrib.auth import get_user_model
from rest_framework import serializers

from core.api.fields import (
    BoundedIntegerField,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    column_length,
)
from core.conf import setting
from mail.models import Mailbox, MailMessage, MailRefusal


class MailboxSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username")
    agentId = serializers.CharField(source="agent_key", allow_blank=True)
    flowId = serializers.CharField(source="flow_key", allow_blank=True)
    allowedSenders = serializers.ListField(source="allowed_senders", child=serializers.CharField())
    sizeLimit = serializers.IntegerField(source="size_limit")
    requireDkim = serializers.BooleanField(source="require_dkim")
    createdAt = serializers.DateTimeField(source="created_at")

    class Meta:
        model = Mailbox
        fields = [
            "id",
            "address",
            "owner",
            "agentId",
            "flowId",
            "allowedSenders",
            "sizeLimit",
            "requireDkim",
            "enabled",
            "createdAt",
        ]
        read_only_fields = fields


class MailboxListSerializer(serializers.Serializer):
    items = MailboxSerializer(many=True)
    nextCursor = serializers.CharField(allow_null=True)


class SaveMailboxSerializer(StrictSerializer):
    """What a tenant admin sends to make or change a mailbox (PATCH: only what changes)."""

    address = StrictCharField(max_length=column_length(Mailbox, "address"))
    owner = StrictCharField(
        max_length=column_length(get_user_model(), "username"),
        help_text="The owner's username: a person of the tenant.",
    )
    agentId = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=column_length(Mailbox, "agent_key"),
        help_text="The agent a mail starts; or flowId.",
    )
    flowId = StrictCharField(required=False, allow_blank=True, max_length=column_length(Mailbox, "flow_key"))
    allowedSenders = serializers.ListField(child=StrictCharField(max_length=254), required=False)
    sizeLimit = BoundedIntegerField(
        required=False,
        min_value=1,
        max_value=setting("KINDGI_MAIL_MAX_BYTES"),
        help_text="Bytes: a bigger mail is refused (at most the site's KINDGI_MAIL_MAX_BYTES).",
    )
    requireDkim = StrictBooleanField(required=False)
    enabled = StrictBooleanField(required=False)

    FIELDS = {
        "address": "address",
        "owner": "owner",
        "agentId": "agent_key",
        "flowId": "flow_key",
        "allowedSenders": "allowed_senders",
        "sizeLimit": "size_limit",
        "requireDkim": "require_dkim",
        "enabled": "enabled",
    }

    def model_fields(self) -> dict:
        return {self.FIELDS[name]: value for name, value in self.validated_data.items()}


class AttachmentSerializer(serializers.Serializer):
    filename = serializers.CharField()
    contentType = serializers.CharField(source="content_type")
    size = serializers.IntegerField()


class MailMessageSerializer(serializers.ModelSerializer):
    direction = serializers.ChoiceField(choices=MailMessage.Direction.choices)
    messageId = serializers.CharField(source="message_id")
    inReplyTo = serializers.CharField(source="in_reply_to", allow_blank=True)
    from_ = serializers.CharField(source="from_address")
    to = serializers.ListField(child=serializers.CharField())
    runId = serializers.UUIDField(source="run_id", allow_null=True)
    conversationId = serializers.UUIDField(source="conversation_id", allow_null=True)
    attachments = AttachmentSerializer(many=True)
    at = serializers.DateTimeField(source="created_at", help_text="When it was received, or sent.")

    class Meta:
        model = MailMessage
        fields = [
            "id",
            "direction",
            "messageId",
            "inReplyTo",
            "from_",
            "to",
            "subject",
            "text",
            "size",
            "attachments",
            "runId",
            "conversationId",
            "note",
            "at",
        ]
        read_only_fields = fields

    def get_fields(self):
        fields = super().get_fields()
        fields["from"] = fields.pop("from_")
        return fields


class MailMessageListSerializer(serializers.Serializer):
    items = MailMessageSerializer(many=True)
    nextCursor = serializers.CharField(allow_null=True)


class MailRefusalSerializer(serializers.ModelSerializer):
    smtpCode = serializers.IntegerField(
        source="smtp_code", help_text="What the sender was told (250: accepted)."
    )
    messageId = serializers.CharField(source="message_id")
    at = serializers.DateTimeField(source="created_at")

    class Meta:
        model = MailRefusal
        fields = ["id", "reason", "detail", "smtpCode", "sender", "messageId", "subject", "size", "at"]
        read_only_fields = fields
