import smtplib
from email.message import EmailMessage

import pytest
from aiosmtpd.controller import Controller

from mail.models import Mailbox
from mail.smtp import MailReceiver
from tests.factories import default_tenant, member
from tests.live_server import free_port


class Sink:
    """A second SMTP server, standing in for the world: it keeps whatever Kindgi sends."""

    def __init__(self):
        self.received: list[dict] = []

    async def handle_DATA(self, server, session, envelope):  # noqa: N802  (aiosmtpd's name)
        from email import message_from_bytes, policy

        self.received.append(
            {
                "from": envelope.mail_from,
                "to": list(envelope.rcpt_tos),
                "message": message_from_bytes(envelope.original_content, policy=policy.default),
                "raw": envelope.original_content,
            }
        )
        return "250 OK"


@pytest.fixture
def sink(settings):
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


@pytest.fixture
def receiver():
    """Kindgi's SMTP receiver on a free port of 127.0.0.1."""
    server = MailReceiver(host="127.0.0.1", port=free_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def ada():
    return member("ada")


@pytest.fixture
def mailbox(ada):
    return Mailbox.objects.create(
        tenant=default_tenant(), address="support@acme.test", owner=ada, agent_key="kindgi-mail.responder"
    )


def mail(
    *,
    sender: str = "bob@example.com",
    to: str = "support@acme.test",
    subject: str = "Where is my order?",
    text: str = "Hello, my order ord_1001 has not arrived.",
    message_id: str = "<m1@example.com>",
    **headers: str,
) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Message-ID"] = message_id
    for name, value in headers.items():
        message[name.replace("_", "-")] = value
    message.set_content(text)
    return message


def send(receiver: MailReceiver, message: EmailMessage, *, envelope_sender: str | None = None) -> None:
    with smtplib.SMTP(receiver.hostname, receiver.port, timeout=30) as client:
        client.send_message(
            message, from_addr=envelope_sender if envelope_sender is not None else message["From"]
        )
