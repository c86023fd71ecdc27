"""API tokens: ``kgi_<prefix>_<secret>``. The database keeps the prefix and a SHA-256 hash."""

import hashlib
import hmac
import secrets

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from core.prepared import Param, Prepared
from tenants.exceptions import ServiceAccountError
from tenants.models import ApiToken, Membership, Tenant

TOKEN_START = "kgi_"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic
def do_create_token(*, user, name: str = "") -> tuple[ApiToken, str]:
    """Create a token for ``user``; the plain token is returned here and never again.

    Joins the caller's transaction (the admin's add view has one)."""
    prefix = secrets.token_hex(4)
    token = f"{TOKEN_START}{prefix}_{secrets.token_urlsafe(32)}"
    record = ApiToken.objects.create(user=user, name=name, prefix=prefix, token_hash=_hash(token))
    return record, token


@transaction.atomic
def do_service_account(*, name: str, tenant: Tenant | None) -> tuple[object, bool]:
    """The service account ``name`` (created in ``tenant`` if there is none yet), and whether it
    was created. A service account has no password: it acts only through its tokens."""
    user = get_user_model().objects.filter(username=name).select_related("membership__tenant").first()
    if user is not None:
        membership = getattr(user, "membership", None)
        if membership is None or not membership.is_service_account:
            raise ServiceAccountError(f"{name!r} is a person's account, not a service account")
        if tenant is not None and membership.tenant_id != tenant.pk:
            raise ServiceAccountError(
                f"service account {name!r} belongs to tenant {membership.tenant.slug!r}, not {tenant.slug!r}"
            )
        return user, False
    if tenant is None:
        raise ServiceAccountError(f"there is no service account {name!r}; name the tenant to create it in")
    user = get_user_model()(username=name)
    user.set_unusable_password()
    user.full_clean(exclude=["password"])
    user.save()
    Membership.objects.create(user=user, tenant=tenant, is_service_account=True)
    return user, True


def do_revoke_token(record: ApiToken) -> ApiToken:
    if record.revoked_at is None:
        record.revoked_at = timezone.now()
        record.save(update_fields=["revoked_at"])
    return record


def bearer_token(authorization: str) -> str | None:
    """The token in an ``Authorization: Bearer <token>`` header value, or None."""
    scheme, _, token = authorization.partition(" ")
    return token.strip() if scheme.lower() == "bearer" else None


_TOKEN_BY_PREFIX = Prepared(
    lambda: (
        ApiToken.objects.select_related("user__membership__tenant")
        .filter(prefix=Param("prefix", ApiToken._meta.get_field("prefix")))
        .order_by()
    )
)


def active_token(token: str) -> ApiToken | None:
    """The token's record, with its user (and the user's membership and tenant, which every
    API call asks for next), if it is active and its user too; None otherwise. Compares hashes
    in constant time; notes the last use."""
    if not token.startswith(TOKEN_START) or token.count("_") < 2:
        return None
    prefix = token[len(TOKEN_START) :].split("_", 1)[0]
    record = _TOKEN_BY_PREFIX.one_or_none(prefix=prefix)
    if record is None or not hmac.compare_digest(record.token_hash, _hash(token)):
        return None
    if record.revoked_at is not None or not record.user.is_active:
        return None
    now = timezone.now()
    if record.last_used_at is None or (now - record.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=record.pk).update(last_used_at=now)
    return record


def user_for_token(token: str):
    """The active token's user, or None."""
    record = active_token(token)
    return record.user if record is not None else None
