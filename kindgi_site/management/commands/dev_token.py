from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from approvals.actions.reviewers import do_save_reviewer
from approvals.models import Reviewer
from approvals.roles import reviewer_roles
from audit.models import Surface
from tenants.tokens import do_create_token, user_for_token


class Command(BaseCommand):
    help = (
        "Print an API token of the development admin (see create_dev_admin), who is also made a "
        "reviewer: the given one if it is still valid, else a new one. For `kindgi dev`."
    )

    def add_arguments(self, parser):
        parser.add_argument("--username", default="admin")
        parser.add_argument("--reuse", default="", help="a token to keep using if it is still valid")

    def handle(self, *args, username: str, reuse: str, **options):
        if not settings.DEBUG:
            raise CommandError("dev_token is for development only")
        from django.contrib.auth import get_user_model

        user = get_user_model().objects.filter(username=username).select_related("membership__tenant").first()
        if user is None or getattr(user, "membership", None) is None:
            raise CommandError(f"there is no development admin {username!r}; run create_dev_admin first")
        if not Reviewer.objects.filter(user=user).exists():
            do_save_reviewer(
                user=user,
                tenant=user.membership.tenant,
                role=reviewer_roles()[-1],
                display_name="Dev Admin",
                acting_user=None,
                surface=Surface.COMMAND,
            )
        if reuse and user_for_token(reuse) == user:
            self.stdout.write(reuse)
            return
        _, token = do_create_token(user=user, name="kindgi dev", surface=Surface.COMMAND)
        self.stdout.write(token)
