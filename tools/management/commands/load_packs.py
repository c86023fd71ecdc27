from django.core.management.base import BaseCommand, CommandError

from kindgi import DefinitionErrors
from tools.loading import do_load_catalog
from tools.mcp.catalog import do_refresh_mcp_servers
from tools.mcp.specs import ServerSpecError
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
        self._list_mcp_servers()
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

    def _list_mcp_servers(self) -> None:
        """A server that does not answer is reported and delays this by its timeout at most."""
        try:
            reports = do_refresh_mcp_servers(timeout=STARTUP_TIMEOUT_SECONDS)
        except ServerSpecError as error:
            raise CommandError(f"KINDGI_MCP_SERVERS: {error}") from None
        for report in reports:
            if report.answered:
                self.stdout.write(str(report))
            else:
                self.stderr.write(self.style.WARNING(str(report)))


# Start-up waits this long at most for each MCP server; the schedule lists a slow one later.
STARTUP_TIMEOUT_SECONDS = 5
