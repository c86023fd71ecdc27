from django.core.management.base import BaseCommand, CommandError

from tools.mcp.catalog import do_refresh_mcp_servers
from tools.mcp.specs import ServerSpecError
from tools.models import McpServer


class Command(BaseCommand):
    help = (
        "Ask the MCP servers (those of KINDGI_MCP_SERVERS and the tenants' own) for their tools and "
        "make the catalog match: new tools join, changed ones change, ones a server no longer lists "
        "retire. A server that does not answer is reported and keeps its tools as they were."
    )

    def add_arguments(self, parser):
        parser.add_argument("names", nargs="*", help="Only these servers (default: every one).")
        parser.add_argument("--timeout", type=float, help="Seconds each server may take to answer.")

    def handle(self, *args, names, timeout, **options):
        if names:
            unknown = sorted(
                set(names) - set(McpServer.objects.filter(name__in=names).values_list("name", flat=True))
            )
            if unknown:
                raise CommandError(f"no MCP server named {', '.join(unknown)}")
        try:
            reports = do_refresh_mcp_servers(names or None, timeout=timeout)
        except ServerSpecError as error:
            raise CommandError(str(error)) from None
        if not reports:
            self.stdout.write(
                "No MCP servers are configured (KINDGI_MCP_SERVERS, or the admin's MCP servers)."
            )
        for report in reports:
            if report.answered:
                self.stdout.write(self.style.SUCCESS(str(report)))
            else:
                self.stderr.write(self.style.WARNING(str(report)))
