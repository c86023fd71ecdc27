"""An SMTP server on loopback standing in for the world: it keeps whatever Kindgi sends."""

from contextlib import contextmanager
from email import message_from_bytes, policy

from aiosmtpd.controller import Controller

from tests.live_server import free_port


class Sink:
    def __init__(self):
        self.received: list[dict] = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802  (aiosmtpd's name)
        self.received.append(
            {
                "from": envelope.mail_from,
                "to": list(envelope.rcpt_tos),
                "message": message_from_bytes(envelope.original_content, policy=policy.default),
                "raw": envelope.original_content,
            }
        )
        return "250 OK"


@contextmanager
def running_sink(settings):
    """A sink on a free port, and Django's default mailer pointed at it over SMTP."""
    handler = Sink()
    controller = Controller(handler, hostname="127.0.0.1", port=free_port())
    controller.start()
    settings.MAILERS = {
        "default": {
            "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
            "OPTIONS": {"host": "127.0.0.1", "port": controller.port, "use_tls": False, "timeout": 10},
        }
    }
    try:
        yield handler
    finally:
        controller.stop()
