from django.contrib import admin, messages

from tenants.models import ApiToken, Membership, Tenant
from tenants.tokens import do_create_token, do_revoke_token


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Create a token here (it is shown once, in a message) or revoke it; the hash never shows."""

    list_display = ["__str__", "user", "name", "created_at", "last_used_at", "revoked_at"]
    list_filter = [("revoked_at", admin.EmptyFieldListFilter)]
    search_fields = ["prefix", "user__username", "name"]
    actions = ["revoke"]

    def get_fields(self, request, obj=None):
        return (
            ["user", "name"]
            if obj is None
            else ["user", "name", "prefix", "created_at", "last_used_at", "revoked_at"]
        )

    def get_readonly_fields(self, request, obj=None):
        return [] if obj is None else ["user", "prefix", "created_at", "last_used_at", "revoked_at"]

    def has_delete_permission(self, request, obj=None):
        return False  # revoke instead: the record stays for the audit

    def save_model(self, request, obj, form, change):
        if change:
            return super().save_model(request, obj, form, change)
        record, token = do_create_token(user=obj.user, name=obj.name)
        obj.pk = record.pk
        messages.warning(request, f"The new token is {token} — copy it now: it will not be shown again.")

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        for record in queryset:
            do_revoke_token(record)
        messages.success(request, f"Revoked {queryset.count()} token(s).")
