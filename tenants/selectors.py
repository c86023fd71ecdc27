from tenants.exceptions import NotAMemberError
from tenants.models import Tenant


def tenant_for_user(user) -> Tenant:
    membership = getattr(user, "membership", None) if user is not None else None
    if membership is None:
        raise NotAMemberError(f"user {user} belongs to no tenant; ask an admin to add them to one")
    return membership.tenant


def is_service_account(user) -> bool:
    """Whether ``user`` is a service account (not a person)."""
    membership = getattr(user, "membership", None) if user is not None else None
    return bool(membership is not None and membership.is_service_account)
