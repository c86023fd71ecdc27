"""The web server as ``kindgi dev`` and ``kindgi serve`` start it: daphne, whose access log writes
each request's path through ``core.secrets.scrub_text``, so that no line of it holds a decision
link's token (which would let whoever reads the log decide as that reviewer) or a secret.

    python -m kindgi_site.web [daphne's arguments] kindgi_site.asgi:application
"""

import sys

from daphne import access, cli

from core.secrets import scrub_text


class ScrubbedAccessLog(access.AccessLogGenerator):
    def write_entry(self, host, date, request, status=None, length=None, ident=None, user=None):
        super().write_entry(host, date, scrub_text(request), status, length, ident, user)


class CommandLine(cli.CommandLineInterface):
    def load_asgi_app(self, asgi_app_path: str):
        # Daphne puts the folder it was started from first on the path; started with -P (as
        # `kindgi dev` and `kindgi serve` do), a folder there named like one of Kindgi's packages
        # (a checkout named kindgi) must not shadow it.
        if sys.flags.safe_path and sys.path[:1] == ["."]:
            del sys.path[0]
        return super().load_asgi_app(asgi_app_path)


def main() -> None:
    cli.AccessLogGenerator = ScrubbedAccessLog  # what daphne's command line makes its log with
    CommandLine.entrypoint()


if __name__ == "__main__":
    main()
