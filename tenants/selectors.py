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


def owned_or_administered(rows, user, *, owner: str = "owner"):
    """Those of ``rows`` in ``user``'s tenant that are theirs, or every one for a tenant admin:
    what a person owns (a mailbox, a schedule) is theirs and their tenant admins' to see."""
    membership = user.membership
    rows = rows.filter(tenant_id=membership.tenant_id)
    return rows if membership.is_tenant_admin else rows.filter(**{owner: user})
