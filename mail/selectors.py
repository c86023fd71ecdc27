"""Reads of mailboxes and their mail: a mailbox is its owner's and its tenant admins' to see."""

from django.db.models import Prefetch, QuerySet

from mail.exceptions import MailboxNotFoundError
from mail.models import MailAttachment, Mailbox, MailMessage, MailRefusal
from tenants.selectors import owned_or_administered


def mailboxes_visible_to(user) -> QuerySet[Mailbox]:
    return owned_or_administered(Mailbox.objects.select_related("owner"), user)


def mailbox_visible_to(user, mailbox_id) -> Mailbox:
    mailbox = mailboxes_visible_to(user).filter(pk=mailbox_id).first()
    if mailbox is None:
        raise MailboxNotFoundError(f"there is no mailbox {mailbox_id}")
    return mailbox


def messages_of(mailbox: Mailbox) -> QuerySet[MailMessage]:
    return (
        MailMessage.objects.filter(mailbox=mailbox)
        .select_related("run")
        .prefetch_related(Prefetch("attachments", queryset=MailAttachment.objects.defer("content")))
        .defer("html", "headers", "run__messages", "run__input", "run__output")
    )


def refusals_of(mailbox: Mailbox) -> QuerySet[MailRefusal]:
    return MailRefusal.objects.filter(mailbox=mailbox)
