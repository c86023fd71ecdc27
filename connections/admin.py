"""Apps in the admin (a tenant's own; the site's come from settings), and connections to look at:
their owner, app, status and scopes, never their tokens."""

from django.contrib import admin

from audit.models import Surface
from connections.actions import check_save_app
from connections.models import App, Connection
from core.admin import TenantScopedAdminMixin
from tenants.authority import ConfigurationAdminMixin


@admin.register(App)
class AppAdmin(ConfigurationAdminMixin, admin.ModelAdmin):
    list_display = ["name", "display_name", "tenant", "enabled", "client_id"]
    list_filter = ["tenant", "enabled"]
    search_fields = ["name", "display_name"]
    fields = [
        "name",
        "display_name",
        "tenant",
        "authorize_url",
        "token_url",
        "scopes",
        "client_id",
        "client_secret_env",
        "api_base_url",
        "enabled",
    ]

    def has_delete_permission(self, request, obj=None):
        return False  # turn it off instead: connections to it keep their history

    def has_change_permission(self, request, obj=None):
        if obj is not None and obj.tenant_id is None:
            return False  # the site's: it follows KINDGI_CONNECTION_APPS
        return super().has_change_permission(request, obj)

    def save_model(self, request, obj, form, change):
        check_save_app(obj, acting_user=request.user, surface=Surface.ADMIN)


@admin.register(Connection)
class ConnectionAdmin(TenantScopedAdminMixin, admin.ModelAdmin):
    list_display = ["app", "owner", "tenant", "status", "connected_at", "last_used_at"]
    list_filter = ["status", "app", "tenant"]
    list_select_related = ["app", "owner", "tenant"]
    # Only what a person may know of a connection: its tokens are not fields of this page.
    fields = [
        "app",
        "owner",
        "tenant",
        "status",
        "scopes",
        "expires_at",
        "connected_at",
        "refreshed_at",
        "last_used_at",
        "revoked_at",
        "failure",
    ]
    readonly_fields = fields

    def has_add_permission(self, request):
        return False  # a person connects an app themselves, in the console or the CLI

    def has_change_permission(self, request, obj=None):
        return False
