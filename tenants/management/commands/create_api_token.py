from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from tenants.tokens import do_create_token


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it is shown only this once)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="What the token is for.")

    def handle(self, *args, username: str, name: str, **options):
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"there is no user {username!r}")
        record, token = do_create_token(user=user, name=name)
        self.stdout.write(token)
        self.stderr.write(f"Created token kgi_{record.prefix}_… for {username}; it will not be shown again.")
