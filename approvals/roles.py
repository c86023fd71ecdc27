"""Reviewer roles, ordered from lowest to highest (``KINDGI_REVIEWER_ROLES``)."""

from core.conf import setting


def reviewer_roles() -> list[str]:
    return list(setting("KINDGI_REVIEWER_ROLES"))


def lowest_role() -> str:
    return reviewer_roles()[0]


def is_role(role: object) -> bool:
    return isinstance(role, str) and role in reviewer_roles()


def may_decide(reviewer_role: str, required_role: str) -> bool:
    """A reviewer may decide what requires their role or a lower one."""
    roles = reviewer_roles()
    if reviewer_role not in roles or required_role not in roles:
        return False
    return roles.index(reviewer_role) >= roles.index(required_role)
