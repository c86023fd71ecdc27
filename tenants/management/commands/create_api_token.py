from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from audit.models import Surface
from core.errors import DomainError
from tenants.exceptions import ServiceAccountError
from tenants.models import Tenant
from tenants.tokens import check_create_token, do_service_account


class Command(BaseCommand):
    help = (
        "Create an API token for a person, or with --service for a service account (created in "
        "--tenant if it does not exist yet), and print it (it is shown only this once). Runs a "
        "service account's token starts are runs no person started (trigger: service); --responsible "
        "names the person who answers for them (their principal), without whom the token starts none."
    )

    def add_arguments(self, parser):
        parser.add_argument("username", nargs="?", help="The person the token is for.")
        parser.add_argument("--service", metavar="NAME", help="A service account's token instead.")
        parser.add_argument("--tenant", metavar="SLUG", help="The tenant of a new service account.")
        parser.add_argument("--name", default="", help="What the token is for.")
        parser.add_argument(
            "--responsible",
            metavar="USER",
            help="With --service: the person (of the service's tenant) who answers for the runs it starts.",
        )

    def handle(
        self,
        *args,
        username: str | None,
        service: str | None,
        tenant: str | None,
        name: str,
        responsible: str | None,
        **options,
    ):
        if (username is None) == (service is None):
            raise CommandError("give a person's username, or --service NAME for a service account")
        if service is not None:
            if responsible is None:
                raise CommandError(
                    "a service's token names the person who answers for the runs it starts: "
                    "--responsible USER"
                )
            answerable = (
                get_user_model().objects.filter(username=responsible).select_related("membership").first()
            )
            if answerable is None:
                raise CommandError(f"there is no user {responsible!r}")
            existing = get_user_model().objects.filter(username=service).exists()
            theirs = getattr(answerable, "membership", None)
            answers = theirs is not None and not theirs.is_service_account and answerable.is_active
            if not existing and not (answers and tenant is not None and theirs.tenant.slug == tenant):
                # Checked before the account is made: a refused token leaves nothing behind.
                raise CommandError(
                    f"{responsible!r} is not an active person of tenant {tenant!r}, to answer for the "
                    "tokens of a service account made there"
                    if tenant is not None
                    else f"there is no service account {service!r}; name the tenant to create it in"
                )
            user = self._service_account(service, tenant)
        else:
            if tenant is not None:
                raise CommandError("--tenant is for a new service account; a person's tenant is their own")
            if responsible is not None:
                raise CommandError("--responsible is for a service's token; a person's runs are their own")
            answerable = None
            user = get_user_model().objects.filter(username=username).first()
            if user is None:
                raise CommandError(f"there is no user {username!r}")
        try:
            record, token = check_create_token(
                acting_user=None, surface=Surface.COMMAND, user=user, name=name, responsible=answerable
            )
        except DomainError as error:
            raise CommandError("; ".join(error.errors) if error.errors else str(error)) from None
        self.stdout.write(token)
        self.stderr.write(
            f"Created token kgi_{record.prefix}_… for {user.get_username()}; it will not be shown again."
        )

    def _service_account(self, service: str, slug: str | None):
        tenant = None
        if slug is not None:
            tenant = Tenant.objects.filter(slug=slug).first()
            if tenant is None:
                raise CommandError(f"there is no tenant {slug!r}")
        try:
            user, created = do_service_account(name=service, tenant=tenant)
        except ServiceAccountError as error:
            raise CommandError(str(error)) from None
        except ValidationError as error:
            raise CommandError(
                f"{service!r} cannot be a service account's name: {error.messages[0]}"
            ) from None
        if created:
            self.stderr.write(f"Created service account {service} in tenant {tenant.slug}.")
        return user
