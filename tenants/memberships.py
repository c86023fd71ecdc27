"""Who belongs to a tenant and who is its admin: the site's to change (a superuser's, in the
admin), each change an entry of the tenant's audit chain."""

from audit.actions import SettingKind

TENANT = SettingKind(
    noun="tenant",
    snapshot=lambda tenant: {"slug": tenant.slug, "name": tenant.name},
    label=lambda tenant: tenant.slug,
)
MEMBERSHIP = SettingKind(
    noun="membership",
    snapshot=lambda membership: {
        "user": membership.user.get_username(),
        "tenantAdmin": membership.is_tenant_admin,
        "serviceAccount": membership.is_service_account,
    },
    label=lambda membership: membership.user.get_username(),
)
