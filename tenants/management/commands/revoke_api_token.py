from django.core.management.base import BaseCommand, CommandError

from tenants.models import ApiToken
from tenants.tokens import do_revoke_token


class Command(BaseCommand):
    help = "Revoke an API token by its prefix (the part after kgi_)."

    def add_arguments(self, parser):
        parser.add_argument("prefix")

    def handle(self, *args, prefix: str, **options):
        record = ApiToken.objects.filter(prefix=prefix.removeprefix("kgi_").split("_")[0]).first()
        if record is None:
            raise CommandError(f"there is no token with the prefix {prefix!r}")
        do_revoke_token(record)
        self.stdout.write(f"Revoked {record}.")
