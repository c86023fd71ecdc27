from django.core.management.base import BaseCommand, CommandError

from kindgi import DefinitionErrors
from tools.loading import do_load_catalog
from tools.registry import get_registry
from tools.selectors import catalog_summary


class Command(BaseCommand):
    help = (
        "Load the packs in settings.KINDGI_PACKS into the catalog: create new definitions, "
        "update changed ones, retire those removed from code. Safe to run again."
    )

    def handle(self, *args, **options):
        try:
            registry = get_registry()
        except DefinitionErrors as errors:
            raise CommandError(str(errors)) from None
        report = do_load_catalog(registry)
        if report.changed:
            self.stdout.write(self.style.SUCCESS(f"Catalog loaded: {report}"))
            return
        catalog = catalog_summary()
        self.stdout.write(
            self.style.SUCCESS(
                f"Catalog up to date with the packs ({', '.join(catalog.packs) or 'none'}): "
                f"{catalog.tools} tools, {catalog.agents} agents, {catalog.flows} flows"
            )
        )
