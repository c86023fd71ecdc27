"""Who may change what: the one configuration authority (DESIGN §6, "Configuration authority").

A tenant admin changes their tenant's configuration: its approval rules, gate overrides,
reviewers and their roles, API tokens, MCP servers, mailboxes, webhook, apps, grants, and other
people's schedules. A superuser may change any tenant's. A member manages only what is their own:
their schedules, connections, passkeys and notification choices. A service account changes
nothing. A ``manage.py`` command acts with the machine's authority: whoever may run one may read
the database already.

Each configuration write's ``check_`` function asks here before it calls its ``do_`` function,
whatever surface the change came from (the API, the CLI, the console, the admin's save_model), and
the console asks the same functions to offer only what they would allow.
"""

from audit.models import Surface
from core.admin import TenantScopedAdminMixin, tenant_of
from tenants.exceptions import ConfigurationForbiddenError

# Surfaces that act with the machine's own authority, with no person signed in.
MACHINE_SURFACES = frozenset({Surface.COMMAND, Surface.SYSTEM})


def configure_refusal(user, tenant, *, surface: str = Surface.API) -> str | None:
    """Why ``user`` may not change ``tenant``'s configuration, or None when they may."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None if surface in MACHINE_SURFACES else "sign in to change a tenant's configuration"
    if not user.is_active:
        return f"{user.get_username()}'s account is deactivated"
    if user.is_superuser:
        return None
    membership = getattr(user, "membership", None)
    if membership is None or membership.tenant_id != tenant.pk:
        return f"{user.get_username()} is not a member of {tenant.slug}"
    if membership.is_service_account:
        return f"{user.get_username()} is a service account; only a person changes a tenant's configuration"
    if not membership.is_tenant_admin:
        return f"only a tenant admin of {tenant.slug} may change this"
    return None


def check_may_configure(user, tenant, *, what: str, surface: str = Surface.API) -> None:
    """Raise ``ConfigurationForbiddenError`` naming ``what`` unless ``user`` may change
    ``tenant``'s configuration."""
    if (refusal := configure_refusal(user, tenant, surface=surface)) is not None:
        raise ConfigurationForbiddenError(f"you may not change {what}: {refusal}")


def own_refusal(user, *, owner, tenant, surface: str = Surface.API) -> str | None:
    """Why ``user`` may not manage something of ``owner``'s in ``tenant`` (a schedule, say), or
    None: its owner may, and so may whoever may change the tenant's configuration."""
    if user is not None and owner is not None and user.pk == owner.pk:
        membership = getattr(user, "membership", None)
        if membership is not None and membership.tenant_id == tenant.pk and user.is_active:
            return None
    refusal = configure_refusal(user, tenant, surface=surface)
    if refusal is None:
        return None
    return f"it is {owner.get_username()}'s, and {refusal}" if owner is not None else refusal


def check_may_manage(user, *, owner, tenant, what: str, surface: str = Surface.API) -> None:
    if (refusal := own_refusal(user, owner=owner, tenant=tenant, surface=surface)) is not None:
        raise ConfigurationForbiddenError(f"you may not change {what}: {refusal}")


def surface_of(request) -> str:
    """The surface an API request came from: the ``kindgi`` command line says so in its
    User-Agent; anything else is the API."""
    agent = request.headers.get("User-Agent", "") if request is not None else ""
    return Surface.CLI if agent.startswith("kindgi-cli/") else Surface.API


class ConfigurationAdminMixin(TenantScopedAdminMixin):
    """For a tenant's configuration (rules, reviewers, tokens, webhook, apps, servers,
    mailboxes): changed only by whoever may change the tenant's configuration
    (``tenants.authority``), so that a staff user who is not a tenant admin is not offered a form
    the ``check_`` function behind it would refuse."""

    def _may_configure(self, request) -> bool:
        if request.user.is_superuser:
            return True
        tenant = tenant_of(request.user)
        return tenant is not None and configure_refusal(request.user, tenant, surface=Surface.ADMIN) is None

    def has_add_permission(self, request, *args):
        return self._may_configure(request) and super().has_add_permission(request, *args)

    def has_change_permission(self, request, obj=None):
        return self._may_configure(request) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return self._may_configure(request) and super().has_delete_permission(request, obj)
