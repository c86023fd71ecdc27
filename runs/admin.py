"""Runs and their journals in the admin: to look at, never to edit (the engine writes them); and
schedules, written through the same checks as the API's."""

from django import forms
from django.contrib import admin

from audit.models import Surface
from core.admin import ReadOnlyAdminMixin, TenantScopedAdminMixin, pretty_json
from runs.models import JournalEntry, Run, Schedule
from runs.schedules import SCHEDULE_FIELDS, check_delete_schedule, check_save_schedule, schedule_errors
from tenants.authority import own_refusal


class JournalInline(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.TabularInline):
    model = JournalEntry
    fields = ["sequence", "kind", "node_id", "created_at", "duration_ms", "payload_pretty"]
    readonly_fields = fields
    ordering = ["sequence"]
    extra = 0

    @admin.display(description="payload")
    def payload_pretty(self, obj: JournalEntry) -> str:
        return pretty_json(obj.payload)


@admin.register(Run)
class RunAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
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
        "principal",
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


class ScheduleForm(forms.ModelForm):
    # Who is saving it (set by ScheduleAdmin.get_form): a schedule is its owner's.
    acting_user = None

    class Meta:
        model = Schedule
        fields = ["tenant", *SCHEDULE_FIELDS]

    def clean(self):
        """Checked by the same rules as the API's (``runs.schedules.schedule_errors``), and by the
        same authority (``tenants.authority.own_refusal``)."""
        data = super().clean()
        tenant = data.get("tenant")
        if tenant is None:
            return data
        owners = {self.instance.owner if self.instance.owner_id else None, data.get("owner")} - {None}
        for owner in owners:
            if (
                refusal := own_refusal(self.acting_user, owner=owner, tenant=tenant, surface=Surface.ADMIN)
            ) is not None:
                self.add_error("owner", f"You may not make or change a schedule of {owner}: {refusal}.")
                return data
        fields = {name: data.get(name) for name in SCHEDULE_FIELDS}
        fields["input"] = fields["input"] if fields["input"] is not None else {}
        data["input"] = fields["input"]
        errors = schedule_errors(fields, tenant=tenant)
        if errors:
            raise forms.ValidationError(errors)
        return data


@admin.register(Schedule)
class ScheduleAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    form = ScheduleForm
    list_display = [
        "name",
        "tenant",
        "agent_key",
        "flow_key",
        "cron",
        "owner",
        "enabled",
        "next_run_at",
        "last_run",
    ]
    list_filter = ["tenant", "enabled"]
    list_select_related = ["tenant", "owner", "last_run"]
    search_fields = ["name", "agent_key", "flow_key"]
    autocomplete_fields = ["owner"]
    readonly_fields = ["next_run_at", "last_run_at", "last_run", "last_error"]

    def get_form(self, request, obj=None, **kwargs):
        form = super().get_form(request, obj, **kwargs)
        form.acting_user = request.user
        return form

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._own(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._own(request, obj)

    @staticmethod
    def _own(request, obj) -> bool:
        return (
            obj is None
            or own_refusal(request.user, owner=obj.owner, tenant=obj.tenant, surface=Surface.ADMIN) is None
        )

    def save_model(self, request, obj, form, change):
        """Through the one action that writes schedules, as the API does."""
        fields = {name: form.cleaned_data[name] for name in SCHEDULE_FIELDS}
        check_save_schedule(
            tenant=form.cleaned_data["tenant"],
            fields=fields,
            schedule=obj,
            acting_user=request.user,
            surface=Surface.ADMIN,
        )

    def delete_model(self, request, obj):
        check_delete_schedule(obj, acting_user=request.user, surface=Surface.ADMIN)

    def delete_queryset(self, request, queryset):
        for schedule in queryset.select_related("tenant", "owner"):
            self.delete_model(request, schedule)
