"""Apps (OAuth 2 providers) and people's connections to them.

A connection is its owner's: its tokens are sealed at rest (``connections.crypto``) and never
leave the server. A connection starts ``pending`` (an authorization under way: its state and
sealed PKCE verifier), becomes ``active`` once the app grants it, and ``revoked`` when its owner
disconnects it or the app refuses to refresh it; a revoked connection keeps no token.
"""

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from kindgi.naming import is_name


class App(models.Model):
    """An outside app people connect to: the site's (``KINDGI_CONNECTION_APPS``) or a tenant's."""

    class Source(models.TextChoices):
        SETTINGS = "settings"
        ADMIN = "admin"

    name = models.CharField(
        max_length=100,
        unique=True,
        help_text="Tools name it: @tool(connection=…).",
    )
    display_name = models.CharField(max_length=200, blank=True)
    tenant = models.ForeignKey(
        "tenants.Tenant",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="+",
        help_text="Whose people may connect it. Empty only for the apps KINDGI_CONNECTION_APPS lists.",
    )
    source = models.CharField(max_length=16, choices=Source.choices, default=Source.ADMIN, editable=False)
    authorize_url = models.URLField(max_length=500)
    token_url = models.URLField(max_length=500)
    scopes = models.JSONField(default=list, blank=True, help_text='e.g. ["read", "write"]')
    client_id = models.CharField(max_length=300)
    client_secret_env = models.CharField(
        "client secret's environment variable",
        max_length=100,
        blank=True,
        help_text="The name of the environment variable that holds the client secret; the secret "
        "itself is never stored. Empty: a public client (PKCE only).",
    )
    api_base_url = models.URLField(
        "API base URL", max_length=500, help_text="Tools' requests are relative to it."
    )
    enabled = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.display_name or self.name

    @property
    def label(self) -> str:
        return self.display_name or self.name

    def clean(self) -> None:
        from runs.connection_sources import built_in_apps  # filled in once the apps are ready

        if not is_name(self.name):
            raise ValidationError({"name": "Lowercase letters, digits and dashes, like a pack's name."})
        if self.name in built_in_apps():
            raise ValidationError({"name": f"{self.name!r} is Kindgi's own (the mail tools act through it)."})
        if self.source == self.Source.ADMIN and self.tenant_id is None:
            raise ValidationError({"tenant": "An app made in the admin belongs to a tenant."})
        if not isinstance(self.scopes, list) or not all(isinstance(scope, str) for scope in self.scopes):
            raise ValidationError({"scopes": 'A list of scope names, e.g. ["read"].'})


class Connection(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending"
        ACTIVE = "active"
        REVOKED = "revoked"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    app = models.ForeignKey(App, on_delete=models.PROTECT, related_name="connections")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="connections")
    tenant = models.ForeignKey("tenants.Tenant", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    scopes = models.JSONField(default=list, blank=True, help_text="The scopes the app granted.")
    # Sealed (connections.crypto): never shown, never sent anywhere but to the app.
    access_token = models.TextField(blank=True, editable=False)
    refresh_token = models.TextField(blank=True, editable=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    # An authorization under way: the state sent to the app (its SHA-256), and the sealed verifier.
    state_digest = models.CharField(max_length=64, blank=True, db_index=True, editable=False)
    code_verifier = models.TextField(blank=True, editable=False)
    redirect_uri = models.URLField(max_length=500, blank=True, editable=False)
    failure = models.TextField(blank=True, help_text="Why it stopped working, in the app's words.")
    created_at = models.DateTimeField(auto_now_add=True)
    connected_at = models.DateTimeField(null=True, blank=True)
    refreshed_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["app", "owner"],
                condition=models.Q(status="active"),
                name="connections_one_active_connection_per_app_and_owner",
            )
        ]

    def __str__(self) -> str:
        return f"{self.owner} → {self.app} ({self.status})"


class ConnectionUse(models.Model):
    """A run that acted through a connection: when it first did, and when it last did."""

    connection = models.ForeignKey(Connection, on_delete=models.CASCADE, related_name="uses")
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    first_used_at = models.DateTimeField()
    last_used_at = models.DateTimeField()

    class Meta:
        ordering = ["-last_used_at"]
        constraints = [
            models.UniqueConstraint(fields=["connection", "run"], name="connections_one_use_per_run")
        ]
        indexes = [models.Index(fields=["connection", "-last_used_at"])]

    def __str__(self) -> str:
        return f"{self.connection} used by run {self.run_id}"
