"""Runs and journal entries on the wire (DESIGN §4), camelCase."""

from django.contrib.auth import get_user_model
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api.fields import (
    JsonObjectField,
    JsonValueField,
    StrictBooleanField,
    StrictCharField,
    StrictSerializer,
    StrictUUIDField,
    column_length,
)
from runs.conversation import conversation_of
from runs.models import JournalEntry, Run, RunStatus, Schedule, Trigger


class ToolCallSerializer(serializers.Serializer):
    id = serializers.CharField()
    toolId = serializers.CharField()
    arguments = JsonObjectField()


class MessageSerializer(serializers.Serializer):
    """One message of an agent turn's conversation."""

    role = serializers.ChoiceField(choices=["user", "assistant", "tool"])
    content = JsonValueField(
        help_text="Text for user and assistant messages; the tool's result for tool messages."
    )
    toolCalls = ToolCallSerializer(many=True, required=False)
    callId = serializers.CharField(required=False)
    toolId = serializers.CharField(required=False)
    outsideData = serializers.BooleanField(required=False)
    source = serializers.ChoiceField(
        choices=["mail", "retrieval"],
        required=False,
        help_text="For outside data in a user message: the mail that started the run, or a retrieval source.",
    )


_MESSAGES = MessageSerializer(many=True)


class RunSerializer(serializers.ModelSerializer):
    flowId = serializers.CharField(source="flow_key")
    flowVersion = serializers.CharField(source="flow_version")
    agentId = serializers.CharField(source="agent_key", allow_null=True, help_text="For agent turns only.")
    agentVersion = serializers.CharField(source="agent_version", allow_null=True)
    status = serializers.ChoiceField(choices=RunStatus.choices)
    dryRun = serializers.BooleanField(source="dry_run")
    readOnly = serializers.BooleanField(source="read_only")
    input = JsonObjectField()
    output = JsonValueField()
    failureMessage = serializers.CharField(source="failure_message", allow_blank=True)
    parentRunId = serializers.UUIDField(source="parent_id", allow_null=True)
    conversationId = serializers.UUIDField(source="conversation_id", allow_null=True)
    trigger = serializers.ChoiceField(
        choices=Trigger.choices, help_text="person: startedBy started it; otherwise no person did."
    )
    startedBy = serializers.CharField(source="started_by.username", allow_null=True, default=None)
    principal = serializers.CharField(
        source="principal.username",
        allow_null=True,
        default=None,
        help_text="The person accountable for the run: who started it, or whom a run no person started "
        "runs for (the schedule's or mailbox's owner, the person responsible for the service token).",
    )
    service = serializers.CharField(
        source="service.username",
        allow_null=True,
        default=None,
        help_text="The service account that started it (trigger service).",
    )
    connections = serializers.SerializerMethodField(
        help_text="In a run no person started: whose connection each app's calls use (app: username)."
    )
    createdAt = serializers.DateTimeField(source="created_at")
    startedAt = serializers.DateTimeField(source="started_at", allow_null=True)
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)

    class Meta:
        model = Run
        fields = [
            "id",
            "flowId",
            "flowVersion",
            "agentId",
            "agentVersion",
            "status",
            "dryRun",
            "readOnly",
            "input",
            "output",
            "failureMessage",
            "parentRunId",
            "conversationId",
            "trigger",
            "startedBy",
            "principal",
            "service",
            "connections",
            "createdAt",
            "startedAt",
            "finishedAt",
        ]
        read_only_fields = fields

    def get_connections(self, run) -> dict[str, str]:
        return {app: owner["username"] for app, owner in (run.connection_owners or {}).items()}

    def to_representation(self, run):
        data = super().to_representation(run)
        if not run.is_agent_turn:
            data["agentId"] = data["agentVersion"] = None
        return data


class RunDetailSerializer(RunSerializer):
    """A run with, for an agent turn, its conversation as it stands (a running turn's, with the
    steps taken since it was last written)."""

    messages = serializers.SerializerMethodField()

    @extend_schema_field(MessageSerializer(many=True))
    def get_messages(self, run) -> list:
        return _MESSAGES.to_representation(conversation_of(run))

    class Meta(RunSerializer.Meta):
        fields = [*RunSerializer.Meta.fields, "messages"]
        read_only_fields = fields


class JournalEntrySerializer(serializers.ModelSerializer):
    nodeId = serializers.CharField(source="node_id", allow_blank=True)
    time = serializers.DateTimeField(source="created_at")
    durationMs = serializers.IntegerField(source="duration_ms", allow_null=True)
    payload = JsonObjectField()

    class Meta:
        model = JournalEntry
        fields = ["sequence", "kind", "nodeId", "time", "durationMs", "payload"]
        read_only_fields = fields


class JournalPageSerializer(serializers.Serializer):
    items = JournalEntrySerializer(many=True)
    nextCursor = serializers.CharField(
        allow_null=True, help_text="The sequence to pass as ?after= for the entries that follow."
    )


class StartRunSerializer(StrictSerializer):
    flowId = StrictCharField(required=False, help_text="The flow to run; or give agentId.")
    agentId = StrictCharField(required=False, help_text="The agent to run one turn of; or give flowId.")
    version = StrictCharField(required=False, help_text="By default, the newest loaded version.")
    input = JsonObjectField(help_text='The flow\'s input; for an agent: {"userMessage": "…", …}.')
    dryRun = StrictBooleanField(default=False)
    readOnly = StrictBooleanField(default=False)
    conversationId = StrictUUIDField(required=False, help_text="Continue this agent conversation.")
    connections = serializers.DictField(
        child=StrictCharField(),
        required=False,
        help_text="For a service's run: whose connection each app's calls use, "
        '{"<app>": "<username>"}; each use first waits for that person\'s yes.',
    )

    def validate(self, data):
        if ("flowId" in data) == ("agentId" in data):
            raise serializers.ValidationError({"flowId": "give exactly one of flowId and agentId"})
        return data


class ScheduleSerializer(serializers.ModelSerializer):
    agentId = serializers.CharField(source="agent_key", allow_blank=True)
    flowId = serializers.CharField(source="flow_key", allow_blank=True)
    input = JsonObjectField()
    owner = serializers.CharField(source="owner.username", help_text="Whose connections its runs use.")
    nextRunAt = serializers.DateTimeField(
        source="next_run_at", allow_null=True, help_text="The next tick it runs on (UTC)."
    )
    lastRunAt = serializers.DateTimeField(source="last_run_at", allow_null=True)
    lastRunId = serializers.UUIDField(source="last_run_id", allow_null=True)
    lastError = serializers.CharField(
        source="last_error", allow_blank=True, help_text="Why its last tick started no run, if it did not."
    )
    createdAt = serializers.DateTimeField(source="created_at")

    class Meta:
        model = Schedule
        fields = [
            "id",
            "name",
            "agentId",
            "flowId",
            "input",
            "cron",
            "owner",
            "enabled",
            "nextRunAt",
            "lastRunAt",
            "lastRunId",
            "lastError",
            "createdAt",
        ]
        read_only_fields = fields


class SaveScheduleSerializer(StrictSerializer):
    """What a member sends to make or change a schedule (PATCH: only what changes)."""

    name = StrictCharField(max_length=column_length(Schedule, "name"))
    agentId = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=column_length(Schedule, "agent_key"),
        help_text="The agent it runs; or flowId.",
    )
    flowId = StrictCharField(required=False, allow_blank=True, max_length=column_length(Schedule, "flow_key"))
    input = JsonObjectField(required=False, help_text="The input of each run, as POST /runs takes it.")
    cron = StrictCharField(
        max_length=column_length(Schedule, "cron"),
        help_text="When it runs, in UTC: minute hour day month weekday (0 9 * * 1-5).",
    )
    owner = StrictCharField(
        required=False,
        max_length=column_length(get_user_model(), "username"),
        help_text="Whose connections its runs use (each use waits for their yes). Default: you; "
        "only a tenant admin names someone else.",
    )
    enabled = StrictBooleanField(required=False)

    FIELDS = {
        "name": "name",
        "agentId": "agent_key",
        "flowId": "flow_key",
        "input": "input",
        "cron": "cron",
        "owner": "owner",
        "enabled": "enabled",
    }

    def model_fields(self) -> dict:
        return {self.FIELDS[name]: value for name, value in self.validated_data.items()}
