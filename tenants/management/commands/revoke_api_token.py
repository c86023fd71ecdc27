from django.core.management.base import BaseCommand, CommandError

from audit.models import Surface
from tenants.models import ApiToken
from tenants.tokens import check_revoke_token


class Command(BaseCommand):
    help = "Revoke an API token by its prefix (the part after kgi_)."

    def add_arguments(self, parser):
        parser.add_argument("prefix")

    def handle(self, *args, prefix: str, **options):
        record = ApiToken.objects.filter(prefix=prefix.removeprefix("kgi_").split("_")[0]).first()
        if record is None:
            raise CommandError(f"there is no token with the prefix {prefix!r}")
        check_revoke_token(record, acting_user=None, surface=Surface.COMMAND)
        self.stdout.write(f"Revoked {record}.")
