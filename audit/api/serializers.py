"""Audit entries and chain heads on the wire, camelCase."""

from rest_framework import serializers

from audit.models import AuditEntry, Surface
from core.api.fields import JsonValueField


class TargetSerializer(serializers.Serializer):
    type = serializers.CharField(
        source="target_type", help_text="What kind of setting: rule, reviewer, token…"
    )
    id = serializers.CharField(source="target_id")
    label = serializers.CharField(source="target_label", help_text="A name a person recognises it by.")


class AuditEntrySerializer(serializers.ModelSerializer):
    action = serializers.CharField(
        help_text="<noun>.<verb>: rule.created, reviewer.role-changed, token.revoked…"
    )
    actor = serializers.CharField(
        source="actor_name", help_text="Who made the change; empty for a manage.py command or Kindgi itself."
    )
    surface = serializers.ChoiceField(choices=Surface.choices)
    target = TargetSerializer(source="*")
    before = JsonValueField(help_text="The setting as it was; null when it did not exist.")
    after = JsonValueField(help_text="The setting as it became; null when it was deleted.")
    createdAt = serializers.DateTimeField(source="created_at")
    previousHash = serializers.CharField(source="previous_hash")

    class Meta:
        model = AuditEntry
        fields = [
            "sequence",
            "action",
            "actor",
            "surface",
            "target",
            "before",
            "after",
            "createdAt",
            "hash",
            "previousHash",
        ]
        read_only_fields = fields


class HeadSerializer(serializers.Serializer):
    sequence = serializers.IntegerField(help_text="The chain's last entry: 0 for none yet.")
    hash = serializers.CharField()


class HeadsSerializer(serializers.Serializer):
    decisions = HeadSerializer()
    audit = HeadSerializer()
