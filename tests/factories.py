"""Objects the tests need, made the way the application makes them."""

from django.contrib.auth import get_user_model

from tenants.models import Membership, Tenant


def default_tenant() -> Tenant:
    tenant, _ = Tenant.objects.get_or_create(slug="acme", defaults={"name": "Acme"})
    return tenant


def other_tenant() -> Tenant:
    tenant, _ = Tenant.objects.get_or_create(slug="globex", defaults={"name": "Globex"})
    return tenant


def member(username: str, *, tenant: Tenant | None = None, tenant_admin: bool = False):
    user = get_user_model().objects.create_user(username=username, password="a-long-test-password")
    Membership.objects.create(user=user, tenant=tenant or default_tenant(), is_tenant_admin=tenant_admin)
    return user


def reviewer(username: str = "rita", *, role: str = "standard", tenant: Tenant | None = None):
    from approvals.models import Reviewer

    user = member(username, tenant=tenant)
    Reviewer.objects.create(
        user=user, tenant=user.membership.tenant, role=role, display_name=username.title()
    )
    return user


def principal(tenant: Tenant | None = None):
    """The person a test's run stands on when the test starts it from code, as a schedule or a
    mailbox would for its owner: a member of ``tenant`` who is no reviewer (made the first time)."""
    tenant = tenant or default_tenant()
    username = "pat" if tenant.slug == "acme" else f"pat-{tenant.slug}"
    user = get_user_model().objects.filter(username=username).first()
    return user or member(username, tenant=tenant)


def superuser():
    """The site's superuser (made the first time): who vouches for a tenant's stdio MCP server."""
    user = get_user_model().objects.filter(username="root").first()
    return user or get_user_model().objects.create_superuser("root", password="a-long-test-password")
