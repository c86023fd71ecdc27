import secrets

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from tenants.models import Membership, Tenant


class Command(BaseCommand):
    help = (
        "Create the development admin user and print its login once. "
        "Does nothing if it exists; refuses to run with KINDGI_DEBUG off."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options):
        if not settings.DEBUG:
            raise CommandError(
                "create_dev_admin is for development only; with KINDGI_DEBUG off, make the first "
                "tenant and its admin with `manage.py create_tenant TENANT --admin USER` "
                "(docs/operations.md)."
            )
        users = get_user_model()
        if users.objects.filter(username=username).exists():
            self.stdout.write(
                f"Development admin {username!r} already exists (its password was printed when "
                f"it was created; `manage.py changepassword {username}` sets a new one)."
            )
            return
        password = secrets.token_urlsafe(12)
        with transaction.atomic():
            tenant, _ = Tenant.objects.get_or_create(slug="default", defaults={"name": "Default"})
            # A mail address, so that the notifications of approvals reach them (printed to the
            # console by the development mailer).
            user = users.objects.create_superuser(
                username=username, email=f"{username}@localhost", password=password
            )
            Membership.objects.create(user=user, tenant=tenant, is_tenant_admin=True)
        self.stdout.write(
            self.style.SUCCESS(
                f"Created the development admin, an admin of tenant {tenant.slug!r}. "
                f"Sign in at /console/login/ as {username!r} with password {password!r} "
                "(shown only this once)."
            )
        )
