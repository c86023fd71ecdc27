from core.errors import DomainError


class TenantError(DomainError):
    """Base class of the tenants app's errors."""


class NotAMemberError(TenantError):
    """The user belongs to no tenant, so it may see nothing."""

    http_status = 403
    code = "no_tenant"
