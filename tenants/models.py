"""Tenants and their members. Nothing a tenant owns is visible to another."""

import uuid

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models


class Tenant(models.Model):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=200)
    created_at = models.DateTimeField(auto_now_add=True)
    # Moves whenever the tenant's approval rules, the gate overrides of its runs or its webhook
    # change (tenants.config); processes read it with each run and keep what they compiled of
    # those while it holds.
    config_version = models.PositiveBigIntegerField(default=0, editable=False)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    """A user belongs to exactly one tenant; a tenant admin manages its rules and reviewers.

    A service account is a member that is not a person: its token starts runs that no person
    started (trigger ``service``), and it never decides an approval."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="membership")
    tenant = models.ForeignKey(Tenant, on_delete=models.PROTECT, related_name="memberships")
    is_tenant_admin = models.BooleanField(default=False)
    is_service_account = models.BooleanField(
        default=False, help_text="Not a person: a program's account, made by create_api_token --service."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"{self.user} in {self.tenant}"


class ApiToken(models.Model):
    """A user's API token. Only its prefix and a hash are kept; the token is shown once.

    A service account's token names the person ``responsible`` for it: the principal of every run
    it starts (``runs.principals``). A service token that names no one starts no run."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    responsible = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="+",
        help_text="For a service account's token: the person accountable for the runs it starts.",
    )
    name = models.CharField(max_length=100, blank=True)
    prefix = models.CharField(max_length=16, unique=True)
    token_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"kgi_{self.prefix}_… ({self.user}{', revoked' if self.revoked_at else ''})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Passkey(models.Model):
    """A person's passkey (a WebAuthn credential): what confirms a decision a rule marks
    ``stepUp``. Only its public half is kept."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="passkeys")
    name = models.CharField(max_length=100, help_text="What its owner calls it, e.g. 'laptop'.")
    # base64url, as the browser names it.
    credential_id = models.CharField(max_length=1400, unique=True)
    public_key = models.BinaryField()
    sign_count = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.user})"


class IdempotencyKey(models.Model):
    """A POST's ``Idempotency-Key``, its request's hash and, once given, its answer: the same
    key with the same request gets that answer again for a day (``tenants.idempotency``)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    # A SHA-256 of the method, the path and the body as parsed: another request with the key is
    # told so, not given this one's answer.
    request_hash = models.CharField(max_length=64)
    # None while the first request with the key is being answered.
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response = models.JSONField(null=True, blank=True, encoder=DjangoJSONEncoder)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "user", "key"], name="tenants_one_idempotency_key")
        ]

    def __str__(self) -> str:
        return f"{self.key} ({self.user_id})"
