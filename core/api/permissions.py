from rest_framework.permissions import BasePermission

NO_TENANT = "you belong to no tenant; ask an admin to add you to one"


class IsTenantMember(BasePermission):
    """Signed in, and a member of a tenant: everything in the API belongs to one."""

    message = NO_TENANT

    def has_permission(self, request, view) -> bool:
        user = request.user
        return bool(user and user.is_authenticated and getattr(user, "membership", None))


class IsTenantAdmin(BasePermission):
    message = NO_TENANT

    def has_permission(self, request, view) -> bool:
        if not IsTenantMember().has_permission(request, view):
            return False
        self.message = "only a tenant admin may do this"
        return is_tenant_admin(request.user)


def is_tenant_admin(user) -> bool:
    """Whether ``user`` is an admin of their tenant (a person: a service account never is), who
    may read what only tenant admins read (the audit). Who may *change* a setting is
    ``tenants.authority``'s to say."""
    membership = getattr(user, "membership", None)
    return bool(membership is not None and membership.is_tenant_admin and not membership.is_service_account)
