"""Kindgi's SMTP receiver (``aiosmtpd``): mail to a mailbox's address starts its run.

Every mail goes through ``mail.actions.receive_mail``, as a provider's webhook's does. The
receiver refuses unknown recipients at RCPT, applies a size limit while the data arrives, keeps
at most ``KINDGI_MAIL_MAX_CONNECTIONS`` connections open (the next is told 421 and closed), at
most ``KINDGI_MAIL_MAX_RECIPIENTS`` recipients a mail, and drops a connection quiet for
``KINDGI_MAIL_TIMEOUT_SECONDS``.
"""

import asyncio
import logging
import time

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session
from asgiref.sync import sync_to_async
from django.db import close_old_connections

from core.conf import setting
from mail.actions import NO_SUCH_MAILBOX, Answer, mailbox_for, receive_mail

logger = logging.getLogger("kindgi.mail")

TOO_MANY_CONNECTIONS = b"421 4.7.0 too many connections; try again later\r\n"


def _fresh(function):
    """``function`` with the database connection checked around it, as a request would have."""

    def call(*args, **kwargs):
        close_old_connections()
        try:
            return function(*args, **kwargs)
        finally:
            close_old_connections()

    return call


_mailbox_for = sync_to_async(_fresh(mailbox_for), thread_sensitive=True)
_receive = sync_to_async(_fresh(receive_mail), thread_sensitive=True)


class MailHandler:
    """aiosmtpd's handler hooks (their names are aiosmtpd's)."""

    async def handle_RCPT(  # noqa: N802  (aiosmtpd's name)
        self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options
    ):
        if len(envelope.rcpt_tos) >= setting("KINDGI_MAIL_MAX_RECIPIENTS"):
            return "452 4.5.3 too many recipients"
        if await _mailbox_for(address) is None:
            return str(NO_SUCH_MAILBOX)
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:  # noqa: N802
        raw = envelope.original_content or b""
        answers: list[Answer] = []
        for recipient in envelope.rcpt_tos:
            answers.append(await _receive(raw, recipient=recipient, envelope_sender=envelope.mail_from or ""))
        accepted = [answer for answer in answers if answer.accepted]
        return str(accepted[0] if accepted else answers[0])


class _Busy(asyncio.Protocol):
    def connection_made(self, transport) -> None:
        transport.write(TOO_MANY_CONNECTIONS)
        transport.close()


class _CountedSMTP(SMTP):
    def __init__(self, *args, receiver: "MailReceiver", **kwargs):
        super().__init__(*args, **kwargs)
        self._receiver = receiver

    def connection_made(self, transport) -> None:
        self._receiver.open_connections += 1
        super().connection_made(transport)

    def connection_lost(self, error) -> None:
        self._receiver.open_connections -= 1
        super().connection_lost(error)


class MailReceiver(Controller):
    """The receiver on ``host``:``port``, in a thread of its own: ``start()``, ``stop()``."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 2525):
        super().__init__(
            MailHandler(),
            hostname=host,
            port=port,
            data_size_limit=setting("KINDGI_MAIL_MAX_BYTES"),
            timeout=setting("KINDGI_MAIL_TIMEOUT_SECONDS"),
            ident="Kindgi",
        )
        self.open_connections = 0

    def start(self) -> None:
        super().start()
        # aiosmtpd's own check that the server is up is a connection too: let it go first.
        deadline = time.monotonic() + 2
        while self.open_connections and time.monotonic() < deadline:
            time.sleep(0.01)

    def factory(self):
        if self.open_connections >= setting("KINDGI_MAIL_MAX_CONNECTIONS"):
            logger.warning("mail: refused a connection: %d are open", self.open_connections)
            return _Busy()
        return _CountedSMTP(self.handler, receiver=self, **self.SMTP_kwargs)
