"""What the apps' admins share: showing JSON, and admins that only show."""

import json

from django.utils.html import format_html


def pretty_json(value) -> str:
    """JSON, indented and escaped, in a <pre>."""
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


class ReadOnlyAdminMixin:
    """For records the application writes (runs, journals, decisions): look, never touch."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class TenantScopedAdminMixin:
    """For records that belong to a tenant: a tenant's staff see only their tenant's and may
    choose no other tenant; a superuser sees and chooses every tenant's. ``tenant_path``: where
    the record's tenant is, for one that belongs to it through another (``mailbox__tenant``)."""

    tenant_path = "tenant"

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        if request.user.is_superuser:
            return rows
        membership = getattr(request.user, "membership", None)
        return rows.filter(**{self.tenant_path: membership.tenant}) if membership else rows.none()

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "tenant" and not request.user.is_superuser:
            from tenants.models import Tenant

            membership = getattr(request.user, "membership", None)
            kwargs["queryset"] = Tenant.objects.filter(pk=membership.tenant_id if membership else None)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)
