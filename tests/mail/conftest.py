import smtplib
from email.message import EmailMessage

import pytest

from mail.models import Mailbox
from mail.smtp import MailReceiver
from tests.factories import default_tenant, member
from tests.live_server import free_port
from tests.smtp_sink import running_sink


@pytest.fixture
def sink(settings):
    with running_sink(settings) as handler:
        yield handler


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
