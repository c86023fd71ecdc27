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


class ConfigurationForbiddenError(TenantError):
    """The acting person may not change this setting (``tenants.authority``); nothing changed."""

    http_status = 403
    code = "forbidden"


class TokenInputError(TenantError):
    """A token asked for that cannot be made as asked; nothing was made."""

    http_status = 400
    code = "invalid_input"
