"""Runs and their journals in the admin: to look at, never to edit (the engine writes them)."""

from django.contrib import admin

from core.admin import ReadOnlyAdminMixin, pretty_json
from runs.models import JournalEntry, Run


class JournalInline(ReadOnlyAdminMixin, admin.TabularInline):
    model = JournalEntry
    fields = ["sequence", "kind", "node_id", "created_at", "duration_ms", "payload_pretty"]
    readonly_fields = fields
    ordering = ["sequence"]
    extra = 0

    @admin.display(description="payload")
    def payload_pretty(self, obj: JournalEntry) -> str:
        return pretty_json(obj.payload)


@admin.register(Run)
class RunAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["id", "flow_key", "agent_key", "status", "trigger", "dry_run", "read_only", "created_at"]
    list_filter = ["status", "trigger", "dry_run", "read_only", "flow_key"]
    search_fields = ["id", "flow_key", "agent_key"]
    list_select_related = ["parent"]
    inlines = [JournalInline]
    fields = [
        "id",
        "flow_key",
        "flow_version",
        "agent_key",
        "agent_version",
        "status",
        "dry_run",
        "read_only",
        "input_pretty",
        "output_pretty",
        "failure_message",
        "waitpoint_pretty",
        "messages_pretty",
        "parent",
        "parent_node_id",
        "conversation_id",
        "trigger",
        "started_by",
        "service",
        "connection_owners",
        "created_at",
        "started_at",
        "finished_at",
    ]
    readonly_fields = fields

    @admin.display(description="input")
    def input_pretty(self, obj: Run) -> str:
        return pretty_json(obj.input)

    @admin.display(description="output")
    def output_pretty(self, obj: Run) -> str:
        return pretty_json(obj.output)

    @admin.display(description="waits on")
    def waitpoint_pretty(self, obj: Run) -> str:
        return pretty_json(obj.waitpoint)

    @admin.display(description="messages")
    def messages_pretty(self, obj: Run) -> str:
        return pretty_json(obj.messages)
