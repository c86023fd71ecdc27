"""The web server as ``kindgi dev`` and ``kindgi serve`` start it: daphne, whose access log writes
each request's path through ``core.secrets.scrub_text``, so that no line of it holds a decision
link's token (which would let whoever reads the log decide as that reviewer) or a secret.

    python -m kindgi_site.web [daphne's arguments] kindgi_site.asgi:application
"""

from daphne import access, cli

from core.secrets import scrub_text


class ScrubbedAccessLog(access.AccessLogGenerator):
    def write_entry(self, host, date, request, status=None, length=None, ident=None, user=None):
        super().write_entry(host, date, scrub_text(request), status, length, ident, user)


def main() -> None:
    cli.AccessLogGenerator = ScrubbedAccessLog  # what daphne's command line makes its log with
    cli.CommandLineInterface.entrypoint()


if __name__ == "__main__":
    main()
