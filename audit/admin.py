"""Audit entries in the admin: to read, never to change; each staff user their own tenant's."""

from django.contrib import admin

from audit.models import AuditEntry
from core.admin import ReadOnlyAdminMixin, TenantScopedAdminMixin, pretty_json
from core.api.permissions import is_tenant_admin


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

    # Who reads the audit in the API and the console reads it here: a tenant's admins (a superuser,
    # the site's), whatever model permissions another staff user holds.
    def has_module_permission(self, request):
        return self._reads_the_audit(request) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None):
        return self._reads_the_audit(request) and super().has_view_permission(request, obj)

    @staticmethod
    def _reads_the_audit(request) -> bool:
        return request.user.is_superuser or is_tenant_admin(request.user)

    @admin.display(description="before")
    def before_pretty(self, obj: AuditEntry) -> str:
        return pretty_json(obj.before)

    @admin.display(description="after")
    def after_pretty(self, obj: AuditEntry) -> str:
        return pretty_json(obj.after)
