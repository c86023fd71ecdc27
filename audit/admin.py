"""Audit entries in the admin: to read, never to change; each staff user their own tenant's."""

from django.contrib import admin

from audit.models import AuditEntry
from core.admin import ReadOnlyAdminMixin, TenantScopedAdminMixin, pretty_json


@admin.register(AuditEntry)
class AuditEntryAdmin(TenantScopedAdminMixin, ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ["sequence", "tenant", "created_at", "actor_name", "surface", "action", "target_label"]
    list_filter = ["surface", "target_type", "tenant"]
    list_select_related = ["tenant"]
    search_fields = ["action", "actor_name", "target_label"]
    fields = [
        "tenant",
        "sequence",
        "created_at",
        "actor_name",
        "surface",
        "action",
        "target_type",
        "target_id",
        "target_label",
        "before_pretty",
        "after_pretty",
        "previous_hash",
        "hash",
    ]
    readonly_fields = fields

    @admin.display(description="before")
    def before_pretty(self, obj: AuditEntry) -> str:
        return pretty_json(obj.before)

    @admin.display(description="after")
    def after_pretty(self, obj: AuditEntry) -> str:
        return pretty_json(obj.after)
