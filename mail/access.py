"""What a mail tool may do with a mailbox owner's "connection": their own mailboxes' mail, and
nothing else. In a run a mail started, only that mail's mailbox."""

import uuid

from django.db.models import Prefetch, Q, QuerySet

from kindgi import ToolError
from mail.models import MailAttachment, Mailbox, MailMessage
from mail.sending import do_send

NOT_FOUND = "MAIL_NOT_FOUND"


class MailboxAccess:
    """``with ctx.connection.client() as mail: mail.search("invoice")``; answers are plain JSON."""

    def __init__(self, *, owner_id, tenant_id, run_id, address: str | None = None):
        self.owner_id, self.tenant_id, self.run_id, self.address = owner_id, tenant_id, run_id, address

    def __enter__(self) -> "MailboxAccess":
        return self

    def __exit__(self, *exc) -> None:
        return None

    def mailboxes(self) -> QuerySet[Mailbox]:
        mine = Mailbox.objects.filter(owner_id=self.owner_id, tenant_id=self.tenant_id)
        return mine.filter(address=self.address) if self.address else mine

    def search(self, query: str, *, limit: int) -> list[dict]:
        """The newest mail (received and sent) with every word of ``query`` in its subject, text
        or sender, as summaries."""
        found = MailMessage.objects.filter(mailbox__in=self.mailboxes()).select_related("mailbox")
        for word in query.split():
            found = found.filter(
                Q(subject__icontains=word) | Q(text__icontains=word) | Q(from_address__icontains=word)
            )
        return [summary(message) for message in found.order_by("-created_at")[:limit]]

    def read(self, message_id: str) -> dict:
        """One mail, whole: its text, and its attachments' names, types and sizes."""
        message = self._find(message_id)
        return summary(message) | {
            "to": message.to,
            "text": message.text,
            "messageId": message.message_id,
            "inReplyTo": message.in_reply_to or None,
            "attachments": [
                {"filename": a.filename, "contentType": a.content_type, "size": a.size}
                for a in message.attachments.all()
            ],
        }

    def reply(self, message_id: str, text: str) -> dict:
        """Answer a mail, in its thread, to whoever sent it (or, for one sent, to its recipients)."""
        original = self._find(message_id)
        subject = (
            original.subject if original.subject.lower().startswith("re:") else f"Re: {original.subject}"
        )
        to = [original.from_address] if original.direction == MailMessage.Direction.IN else list(original.to)
        sent = do_send(
            mailbox=original.mailbox,
            to=to,
            subject=subject,
            text=text,
            run_id=self.run_id,
            answering=original,
        )
        return _sent(sent)

    def send(self, *, to: list[str], subject: str, text: str, from_address: str | None) -> dict:
        """A new mail from one of the owner's mailboxes (``from_address``, or their first)."""
        mailboxes = self.mailboxes()
        mailbox = (
            mailboxes.filter(address=from_address.lower()).first() if from_address else mailboxes.first()
        )
        if mailbox is None:
            raise ToolError(
                NOT_FOUND,
                f"There is no mailbox {from_address} to send from through this connection."
                if from_address
                else "There is no mailbox to send from through this connection.",
                recommended_action="Send from one of the owner's mailboxes.",
            )
        return _sent(do_send(mailbox=mailbox, to=to, subject=subject, text=text, run_id=self.run_id))

    def _find(self, message_id: str) -> MailMessage:
        message = (
            MailMessage.objects.filter(mailbox__in=self.mailboxes(), pk=_uuid(message_id))
            .select_related("mailbox")
            .prefetch_related(Prefetch("attachments", queryset=MailAttachment.objects.defer("content")))
            .first()
        )
        if message is None:
            raise ToolError(
                NOT_FOUND,
                f"There is no mail {message_id} in the mailboxes this connection reaches.",
                recommended_action="Use an id that kindgi-mail.search returned.",
            )
        return message


def summary(message: MailMessage) -> dict:
    return {
        "id": str(message.pk),
        "mailbox": message.mailbox.address,
        "direction": message.direction,
        "from": message.from_address,
        "subject": message.subject,
        "at": message.created_at.isoformat(),
        "snippet": " ".join(message.text.split())[:200],
    }


def _sent(message: MailMessage) -> dict:
    return {
        "id": str(message.pk),
        "mailbox": message.mailbox.address,
        "to": message.to,
        "subject": message.subject,
        "messageId": message.message_id,
    }


def _uuid(value: str):
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None
