"""API tokens: ``kgi_<prefix>_<secret>``. The database keeps the prefix and a SHA-256 hash."""

import hashlib
import hmac
import secrets

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from audit.actions import record_change
from audit.models import Surface
from core.prepared import Param, Prepared
from tenants.authority import MACHINE_SURFACES, check_may_configure
from tenants.exceptions import ConfigurationForbiddenError, ServiceAccountError, TokenInputError
from tenants.models import ApiToken, Membership, Tenant
from tenants.selectors import is_service_account, tenant_for_user

TOKEN_START = "kgi_"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_create_token(
    *, acting_user, surface: str, user, name: str = "", responsible=None
) -> tuple[ApiToken, str]:
    """Create a token for ``user``, a member of a tenant, if the acting person may change that
    tenant's tokens (``tenants.authority``): a service account's, or their own (a token of someone
    else's would let them act as that person). A service account's token names the person
    responsible for the runs it starts, who is whoever makes it (a manage.py command names one,
    ``responsible``, a person of its tenant); a person's token names no one (its runs are that
    person's own)."""
    tenant = tenant_for_user(user)
    check_may_configure(acting_user, tenant, what=f"{tenant.slug}'s API tokens", surface=surface)
    if not is_service_account(user) and acting_user is not None and acting_user.pk != user.pk:
        # Whoever held it would act as that person: decide as them, start runs that stand on them.
        raise ConfigurationForbiddenError(
            f"a person's token is theirs alone to make: {user.get_username()} makes their own "
            "(a tenant admin makes service accounts' tokens)"
        )
    if is_service_account(user):
        if acting_user is not None and surface not in MACHINE_SURFACES:
            # The principal of its runs is whoever made it: naming another would let the maker
            # approve, under four-eyes, the calls of runs they started.
            if responsible is not None and responsible.pk != acting_user.pk:
                raise ConfigurationForbiddenError(
                    f"a service's token answers to the person who makes it: {acting_user.get_username()}, "
                    f"not {responsible.get_username()} (a manage.py command names another)"
                )
            responsible = acting_user
        if responsible is None:
            raise TokenInputError(
                [
                    f"/responsible: a token of service account {user.get_username()} names the person "
                    "responsible for the runs it starts (--responsible USER)"
                ]
            )
        membership = getattr(responsible, "membership", None)
        if membership is None or membership.tenant_id != tenant.pk or not responsible.is_active:
            raise TokenInputError(
                [f"/responsible: {responsible.get_username()} is not an active person of {tenant.slug}"]
            )
        if membership.is_service_account:
            raise TokenInputError(
                [
                    f"/responsible: {responsible.get_username()} is a service account, "
                    "and a token is answered for by a person"
                ]
            )
    elif responsible is not None:
        raise TokenInputError(
            [f"/responsible: {user.get_username()} is a person; their token's runs are their own"]
        )
    return do_create_token(
        user=user, name=name, responsible=responsible, acting_user=acting_user, surface=surface
    )


@transaction.atomic
def do_create_token(
    *, user, name: str = "", responsible=None, acting_user=None, surface: str = Surface.SYSTEM
) -> tuple[ApiToken, str]:
    """Create a token for ``user``; the plain token is returned here and never again. Its making
    is recorded in the user's tenant's audit chain (the token itself, never).

    Joins the caller's transaction (the admin's add view has one)."""
    prefix = secrets.token_hex(4)
    token = f"{TOKEN_START}{prefix}_{secrets.token_urlsafe(32)}"
    record = ApiToken.objects.create(
        user=user, name=name, prefix=prefix, token_hash=_hash(token), responsible=responsible
    )
    _record(
        record, acting_user=acting_user, surface=surface, action="token.created", after=token_facts(record)
    )
    return record, token


def token_facts(record: ApiToken) -> dict:
    """What the audit keeps of a token: never the token, nor its hash."""
    return {
        "prefix": f"kgi_{record.prefix}_…",
        "user": record.user.get_username(),
        "name": record.name,
        "responsible": record.responsible.get_username() if record.responsible_id else None,
        "revoked": record.revoked_at is not None,
    }


def _record(record: ApiToken, *, acting_user, surface: str, action: str, before=None, after=None) -> None:
    membership = getattr(record.user, "membership", None)
    if membership is None:
        return  # a token of no tenant's: it opens nothing (every call asks for a tenant)
    record_change(
        tenant=membership.tenant,
        acting_user=acting_user,
        surface=surface,
        action=action,
        target_type="token",
        target_id=record.pk,
        target_label=f"kgi_{record.prefix}_… of {record.user.get_username()}",
        before=before,
        after=after,
    )


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
    record_change(
        tenant=tenant,
        acting_user=None,
        surface=Surface.COMMAND,
        action="service-account.created",
        target_type="service-account",
        target_id=user.pk,
        target_label=name,
        after={"user": name, "serviceAccount": True},
    )
    return user, True


def check_revoke_token(record: ApiToken, *, acting_user, surface: str) -> ApiToken:
    """Revoke a token, if the acting person may change its tenant's tokens."""
    membership = getattr(record.user, "membership", None)
    if membership is not None:
        check_may_configure(
            acting_user, membership.tenant, what=f"{membership.tenant.slug}'s API tokens", surface=surface
        )
    elif acting_user is not None and not acting_user.is_superuser and surface not in MACHINE_SURFACES:
        raise ConfigurationForbiddenError("only a superuser revokes a token of a user of no tenant")
    return do_revoke_token(record, acting_user=acting_user, surface=surface)


@transaction.atomic
def do_revoke_token(record: ApiToken, *, acting_user=None, surface: str = Surface.SYSTEM) -> ApiToken:
    if record.revoked_at is None:
        before = token_facts(record)
        record.revoked_at = timezone.now()
        record.save(update_fields=["revoked_at"])
        _record(
            record,
            acting_user=acting_user,
            surface=surface,
            action="token.revoked",
            before=before,
            after=token_facts(record),
        )
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
