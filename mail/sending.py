"""Sending mail from a mailbox: the one way out, for the mail tools."""

from email.utils import make_msgid

from django.core.mail import EmailMessage

from core.conf import setting
from core.errors import DomainError
from mail.models import Mailbox, MailMessage
from mail.parsing import LOOP_HEADER
from runs.models import Run


class MailSendError(DomainError):
    http_status = 502
    code = "mail_not_sent"


def do_send(
    *,
    mailbox: Mailbox,
    to: list[str],
    subject: str,
    text: str,
    run_id=None,
    answering: MailMessage | None = None,
) -> MailMessage:
    """Send a mail from ``mailbox`` through Kindgi's mailer (``KINDGI_MAILER``), marked so that
    no auto-responder (Kindgi's included) answers it, and keep it in the mailbox's thread."""
    domain = mailbox.address.rsplit("@", 1)[-1]
    message_id = make_msgid(domain=domain)
    headers = {"Message-ID": message_id, "Auto-Submitted": "auto-replied", LOOP_HEADER: mailbox.address}
    references: list[str] = []
    if answering is not None:
        references = [*answering.references, answering.message_id]
        headers["In-Reply-To"] = answering.message_id
        headers["References"] = " ".join(references)
    outgoing = EmailMessage(subject=subject, body=text, from_email=mailbox.address, to=to, headers=headers)
    try:
        outgoing.send(using=setting("KINDGI_MAILER"))
    except Exception as error:
        raise MailSendError(f"the mail could not be sent ({type(error).__name__}: {error})") from error
    sent = outgoing.message()
    conversation = None
    if run_id is not None:
        conversation = Run.objects.filter(pk=run_id).values_list("conversation_id", flat=True).first()
    return MailMessage.objects.create(
        tenant_id=mailbox.tenant_id,
        mailbox=mailbox,
        direction=MailMessage.Direction.OUT,
        message_id=message_id,
        in_reply_to=answering.message_id if answering else "",
        references=references,
        from_address=mailbox.address,
        to=to,
        subject=subject,
        text=text,
        headers=[[name, str(value)] for name, value in sent.items()],
        size=len(sent.as_bytes()),
        run_id=run_id,
        conversation_id=conversation or (answering.conversation_id if answering else None),
    )
