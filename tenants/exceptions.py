from core.errors import DomainError


class TenantError(DomainError):
    """Base class of the tenants app's errors."""


class NotAMemberError(TenantError):
    """The user belongs to no tenant, so it may see nothing."""

    http_status = 403
    code = "no_tenant"


class ServiceAccountError(TenantError):
    """A service account asked for that cannot be one (a person's name, another tenant's)."""

    http_status = 400
    code = "invalid_input"
