import secrets

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.core.validators import validate_email, validate_slug
from django.db import transaction

from approvals.actions.reviewers import DISPLAY_NAME_MAX, do_save_reviewer
from approvals.roles import reviewer_roles
from audit.actions import do_save_setting
from audit.models import Surface
from core.conf import setting
from tenants.memberships import MEMBERSHIP, TENANT
from tenants.models import Membership, Tenant


class Command(BaseCommand):
    help = (
        "Create a tenant and its first admin, who is also its reviewer at the highest role: the "
        "first step of a production site (docs/operations.md). The admin is a new user, whose "
        "password is printed once, or an existing user of no tenant (a superuser, say). Each "
        "change is an entry of the tenant's audit chain. Works with KINDGI_DEBUG off."
    )

    def add_arguments(self, parser):
        parser.add_argument("slug", metavar="TENANT", help="The tenant's slug, e.g. acme.")
        parser.add_argument("--name", help="Its name, shown in the console (default: the slug).")
        parser.add_argument("--admin", metavar="USER", required=True, help="Its first admin's username.")
        parser.add_argument(
            "--email", default="", help="A new admin's mail address (notifications go there)."
        )
        parser.add_argument("--display-name", help="The admin's name as a reviewer (default: the username).")

    def handle(
        self, *args, slug: str, name: str | None, admin: str, email: str, display_name: str | None, **options
    ):
        _check(slug, name, admin, email, display_name or admin)
        users = get_user_model()
        with transaction.atomic():
            if Tenant.objects.filter(slug=slug).exists():
                raise CommandError(
                    f"there is a tenant {slug!r} already: add people to it in the admin (Tenants), or "
                    "choose another slug"
                )
            user = users.objects.select_for_update().filter(username=admin).first()
            password = None
            if user is None:
                password = secrets.token_urlsafe(12)
                user = users.objects.create_user(username=admin, email=email, password=password)
            elif getattr(user, "membership", None) is not None:
                raise CommandError(
                    f"{admin!r} belongs to the tenant {user.membership.tenant.slug!r} already: a user "
                    "belongs to one tenant; choose another username"
                )
            # Staff: the admin site, where a tenant admin who is no superuser sees their tenant's rows.
            if not user.is_staff:
                user.is_staff = True
                user.save(update_fields=["is_staff"])
            tenant = _save_tenant(slug, name or slug)
            do_save_setting(
                Membership(user=user, tenant=tenant, is_tenant_admin=True),
                kind=MEMBERSHIP,
                tenant=tenant,
                acting_user=None,
                surface=Surface.COMMAND,
            )
            role = reviewer_roles()[-1]
            do_save_reviewer(
                user=user,
                tenant=tenant,
                role=role,
                display_name=display_name or admin,
                acting_user=None,
                surface=Surface.COMMAND,
            )
        sign_in = f"{setting('KINDGI_PUBLIC_URL').rstrip('/')}/console/login/"
        said = (
            f"Created the tenant {slug!r} and its first admin {admin!r}, a reviewer with the role {role!r}."
        )
        if password is not None:
            said += f" Sign in at {sign_in} as {admin!r} with password {password!r} (shown only this once)."
        else:
            said += f" Sign in at {sign_in} as {admin!r} with their password."
            if email and email != user.email:
                said += f" --email was left unused: {admin!r} existed, with the address {user.email!r}."
        self.stdout.write(self.style.SUCCESS(said))
        self.stdout.write(f"An API token for them: manage.py create_api_token {admin}")


def _save_tenant(slug: str, name: str) -> Tenant:
    tenant = Tenant(slug=slug, name=name)
    return do_save_setting(tenant, kind=TENANT, tenant=tenant, acting_user=None, surface=Surface.COMMAND)


def _check(slug: str, name: str | None, admin: str, email: str, display_name: str) -> None:
    """Everything named, checked before anything is written."""
    wrong = []
    username = get_user_model()._meta.get_field(get_user_model().USERNAME_FIELD)
    try:
        username.run_validators(admin)
        if not admin or len(admin) > username.max_length:
            raise ValidationError("length")
    except ValidationError:
        wrong.append(
            f"--admin {admin!r} is not a username (1 to {username.max_length} letters, digits and @.+-_)"
        )
    most = Tenant._meta.get_field("name").max_length
    if name is not None and (not name.strip() or len(name) > most):
        wrong.append(f"--name must be 1 to {most} characters")
    try:
        validate_slug(slug)
    except ValidationError:
        wrong.append(f"TENANT {slug!r} is not a slug (letters, digits, dashes and underscores)")
    if len(slug) > Tenant._meta.get_field("slug").max_length:
        wrong.append(f"TENANT {slug!r} is longer than {Tenant._meta.get_field('slug').max_length} characters")
    if email:
        try:
            validate_email(email)
        except ValidationError:
            wrong.append(f"--email {email!r} is not a mail address")
    if not display_name.strip() or len(display_name) > DISPLAY_NAME_MAX:
        wrong.append(f"--display-name must be 1 to {DISPLAY_NAME_MAX} characters")
    if wrong:
        raise CommandError("; ".join(wrong))
