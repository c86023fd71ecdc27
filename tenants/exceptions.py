class TenantError(Exception):
    """Base class of the tenants app's errors."""


class NotAMemberError(TenantError):
    """The user belongs to no tenant, so it may see nothing."""
