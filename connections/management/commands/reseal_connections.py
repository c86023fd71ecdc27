from django.core.management.base import BaseCommand

from connections.actions import do_reseal_connections


class Command(BaseCommand):
    help = (
        "Seal every connection's tokens again with the newest key of KINDGI_ENCRYPTION_KEY (the first): "
        "the step between putting a new key in front and dropping the old one."
    )

    def handle(self, *args, **options):
        count = do_reseal_connections()
        self.stdout.write(self.style.SUCCESS(f"Sealed {count} connection(s) again with the newest key."))
