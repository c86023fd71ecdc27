"""Connections on the wire: what a person may know of their own connections. Never a token."""

from rest_framework import serializers

from connections.models import App, Connection
from core.api.fields import StrictCharField, StrictSerializer


class AppSerializer(serializers.ModelSerializer):
    displayName = serializers.CharField(source="label")
    scope = serializers.SerializerMethodField(help_text="site: for every tenant; tenant: your own.")
    apiBaseUrl = serializers.CharField(source="api_base_url")

    class Meta:
        model = App
        fields = ["name", "displayName", "scope", "scopes", "apiBaseUrl"]
        read_only_fields = fields

    def get_scope(self, app: App) -> str:
        return "site" if app.tenant_id is None else "tenant"


class AppListSerializer(serializers.Serializer):
    items = AppSerializer(many=True)


class ConnectionSerializer(serializers.ModelSerializer):
    app = serializers.CharField(source="app.name")
    appName = serializers.CharField(source="app.label")
    owner = serializers.CharField(source="owner.username")
    expiresAt = serializers.DateTimeField(source="expires_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    connectedAt = serializers.DateTimeField(source="connected_at", allow_null=True)
    refreshedAt = serializers.DateTimeField(source="refreshed_at", allow_null=True)
    lastUsedAt = serializers.DateTimeField(source="last_used_at", allow_null=True)
    revokedAt = serializers.DateTimeField(source="revoked_at", allow_null=True)

    class Meta:
        model = Connection
        fields = [
            "id",
            "app",
            "appName",
            "owner",
            "status",
            "scopes",
            "expiresAt",
            "createdAt",
            "connectedAt",
            "refreshedAt",
            "lastUsedAt",
            "revokedAt",
            "failure",
        ]
        read_only_fields = fields


class ConnectionListSerializer(serializers.Serializer):
    items = ConnectionSerializer(many=True)


class StartedConnectionSerializer(ConnectionSerializer):
    authorizeUrl = serializers.SerializerMethodField(help_text="Open it to grant access; it works once.")

    class Meta(ConnectionSerializer.Meta):
        fields = [*ConnectionSerializer.Meta.fields, "authorizeUrl"]
        read_only_fields = fields

    def get_authorizeUrl(self, connection) -> str:  # noqa: N802
        return self.context["authorize_url"]


class StartConnectionSerializer(StrictSerializer):
    app = StrictCharField(help_text="The app's name, as GET /api/v1/connection-apps lists it.")
