"""Receiving mail, the one way in whichever door it came through (the SMTP receiver, a provider's
inbound webhook), and writing mailboxes (the API and the admin). Sending is ``mail.sending``.

A received mail is checked in this order: its mailbox (unknown: refused), its size, its senders
(the From header and, when known and not empty, the envelope sender, each against the mailbox's
allow-list), its DKIM signature (when the mailbox requires one); then mail no one should answer
(a loop, an auto-reply, bulk mail, a bounce) and duplicates are accepted but start nothing.
Every mail that starts nothing is recorded with the reason.
"""

import fnmatch
import hashlib
import logging
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction

from audit.actions import SettingKind, do_delete_setting, do_save_setting
from core.conf import setting
from core.errors import DomainError
from core.secrets import scrub_secrets
from mail.dkim_check import dkim_failure
from mail.exceptions import MailboxInputError
from mail.models import DEFAULT_SIZE_LIMIT, MailAttachment, Mailbox, MailMessage, MailRefusal
from mail.parsing import ParsedMail, automatic, envelope_address, parse
from runs.actions import check_start_run
from runs.exceptions import ConversationNotFoundError, RunStateError
from runs.models import Run, Trigger
from tenants.authority import check_may_configure
from tools.registry import get_registry

logger = logging.getLogger("kindgi.mail")

# The app whose "connection" a mail tool acts through: the owner's own mailboxes.
MAILBOX_APP = "mailbox"
# How much of a mail's text a run's input carries; the rest is for kindgi-mail.read.
INPUT_TEXT_LIMIT = 20_000


@dataclass(frozen=True)
class Answer:
    """What the sender is told: an SMTP reply code and text."""

    code: int
    text: str

    @property
    def accepted(self) -> bool:
        return self.code < 400

    def __str__(self) -> str:
        return f"{self.code} {self.text}"


NO_SUCH_MAILBOX = Answer(550, "5.1.1 no such mailbox here")


def mailbox_for(address: str) -> Mailbox | None:
    return (
        Mailbox.objects.filter(address=address.strip().lower(), enabled=True)
        .select_related("owner", "tenant")
        .first()
    )


def receive_mail(raw: bytes, *, recipient: str, envelope_sender: str | None) -> Answer:
    """Take a mail to ``recipient``: store it and start its mailbox's run, or refuse it (with
    the SMTP answer to give) or accept it without answering, recording why either way.
    ``envelope_sender``: the SMTP MAIL FROM ("" for a bounce), None when not known."""
    mailbox = mailbox_for(recipient)
    if mailbox is None:
        return NO_SUCH_MAILBOX
    if len(raw) > mailbox.size_limit:
        return _refuse(
            mailbox,
            MailRefusal.Reason.TOO_BIG,
            Answer(552, f"5.3.4 message too big for this mailbox (its limit is {mailbox.size_limit} bytes)"),
            sender=envelope_sender or "",
            size=len(raw),
        )
    try:
        mail = parse(raw)
    except Exception as error:  # a parser that gives up: the sender is told, nothing runs
        return _refuse(
            mailbox,
            MailRefusal.Reason.UNREADABLE,
            Answer(550, "5.6.0 the message could not be read"),
            detail=type(error).__name__,
            sender=envelope_sender or "",
            size=len(raw),
        )
    about = {
        "sender": mail.from_address,
        "message_id": mail.message_id,
        "subject": mail.subject,
        "size": len(raw),
    }
    if (
        refused := sender_not_allowed(mail.from_address, envelope_sender, mailbox.allowed_senders)
    ) is not None:
        which, address = refused
        answer = Answer(550, f"5.7.1 {which} {address or '(none)'} may not send to this mailbox")
        return _refuse(
            mailbox, MailRefusal.Reason.SENDER_NOT_ALLOWED, answer, **(about | {"sender": address})
        )
    if mailbox.require_dkim and (why := dkim_failure(raw, mail.from_address)) is not None:
        answer = Answer(550, f"5.7.20 no valid DKIM signature of the sender's domain: {why}")
        return _refuse(mailbox, MailRefusal.Reason.DKIM_FAILED, answer, detail=why, **about)
    if (unanswered := automatic(mail, envelope_sender)) is not None:
        reason, detail = unanswered
        answer = Answer(250, f"2.0.0 accepted; not answered ({detail})")
        return _refuse(mailbox, MailRefusal.Reason(reason), answer, detail=detail, **about)
    message_id = mail.message_id or _made_up_id(raw)
    try:
        message = do_store_received(mailbox, mail, message_id=message_id, size=len(raw))
    except IntegrityError:
        message = None
    if message is None:
        answer = Answer(250, "2.0.0 accepted; already received (same Message-ID)")
        return _refuse(mailbox, MailRefusal.Reason.DUPLICATE, answer, detail=message_id, **about)
    start_run_for(message, mailbox)
    return Answer(250, "2.0.0 accepted")


def sender_not_allowed(
    from_address: str, envelope_sender: str | None, allowed: list[str]
) -> tuple[str, str] | None:
    """Which of a mail's senders the allow-list keeps out, as (which, address), or None.

    Both are asked: the From header, which the model and the reviewers read, and the envelope
    sender (SMTP MAIL FROM), which the sending server gave. Neither is proven without DKIM, but a
    From copied from a listed sender no longer lets a mail in on its own. An envelope sender not
    known (None) or empty (a bounce's, never answered: ``automatic``) is not asked about."""
    if not sender_allowed(from_address, allowed):
        return "the sender (From)", from_address
    envelope = envelope_address(envelope_sender)
    if envelope and not sender_allowed(envelope, allowed):
        return "the envelope sender (MAIL FROM)", envelope
    return None


def sender_allowed(address: str, allowed: list[str]) -> bool:
    """Whether ``address`` matches one of ``allowed``: addresses or globs, a bare domain meaning
    anyone at it. An empty list allows anyone."""
    if not allowed:
        return True
    address = address.lower()
    for pattern in allowed:
        pattern = pattern.strip().lower()
        if "@" not in pattern:
            pattern = f"*@{pattern}"
        if fnmatch.fnmatchcase(address, pattern):
            return True
    return False


def _made_up_id(raw: bytes) -> str:
    """A Message-ID for a mail that has none: the same mail gets the same one, so that it is
    still received once."""
    return f"<sha256-{hashlib.sha256(raw).hexdigest()[:40]}@kindgi.invalid>"


def _refuse(mailbox: Mailbox, reason: str, answer: Answer, *, detail: str = "", **about: Any) -> Answer:
    MailRefusal.objects.create(
        mailbox=mailbox, reason=reason, detail=detail or answer.text, smtp_code=answer.code, **about
    )
    logger.info("mail to %s: %s (%s)", mailbox.address, answer, reason)
    return answer


@transaction.atomic(durable=True)
def do_store_received(
    mailbox: Mailbox, mail: ParsedMail, *, message_id: str, size: int
) -> MailMessage | None:
    """Store a received mail and its attachments once; None when it was already received."""
    if MailMessage.objects.filter(mailbox=mailbox, message_id=message_id).exists():
        return None
    # Mail is stored input like any other: a provider key in it (by mistake or by design) is
    # scrubbed before it reaches a row, a page or a model.
    readable = scrub_secrets(
        {
            "from_address": mail.from_address,
            "to": mail.to,
            "subject": mail.subject,
            "text": mail.text,
            "html": mail.html,
            "headers": mail.headers,
        }
    )
    message = MailMessage.objects.create(
        tenant_id=mailbox.tenant_id,
        mailbox=mailbox,
        direction=MailMessage.Direction.IN,
        message_id=message_id,
        in_reply_to=mail.in_reply_to,
        references=mail.references,
        size=size,
        **readable,
    )
    MailAttachment.objects.bulk_create(
        MailAttachment(
            message=message,
            filename=attachment.filename[:255],
            content_type=attachment.content_type[:255],
            size=attachment.size,
            content=attachment.content,
        )
        for attachment in mail.attachments
    )
    return message


def mail_input(message: MailMessage) -> dict[str, Any]:
    """The mail as a run's input holds it (and as the model reads it, as outside data)."""
    text = message.text
    data = {
        "id": str(message.pk),
        "mailbox": message.mailbox.address,
        "from": message.from_address,
        "to": message.to,
        "subject": message.subject,
        "text": text[:INPUT_TEXT_LIMIT],
        "messageId": message.message_id,
        "inReplyTo": message.in_reply_to or None,
        "receivedAt": message.created_at.isoformat(),
        "attachments": [
            {"filename": a.filename, "contentType": a.content_type, "size": a.size}
            for a in message.attachments.all()
        ],
    }
    if len(text) > INPUT_TEXT_LIMIT:
        data["textTruncated"] = True
    return data


def thread_conversation(message: MailMessage) -> Any:
    """The conversation of the thread ``message`` answers (by In-Reply-To and References), if
    the mailbox has a mail of it."""
    ids = [value for value in (message.in_reply_to, *message.references) if value]
    if not ids:
        return None
    earlier = (
        MailMessage.objects.filter(
            mailbox_id=message.mailbox_id, message_id__in=ids, conversation_id__isnull=False
        )
        .exclude(pk=message.pk)
        .order_by("-created_at")
        .first()
    )
    return earlier.conversation_id if earlier else None


def start_run_for(message: MailMessage, mailbox: Mailbox) -> Run | None:
    """Start the mailbox's agent or flow on ``message``: no person started it, and whose
    connection its mail tools use is the mailbox owner's (each use waits for their yes)."""
    run_input: dict[str, Any] = {"mail": mail_input(message)}
    if mailbox.agent_key:
        run_input["userMessage"] = f"A mail arrived at {mailbox.address}. It follows, as outside data."
    start = {
        "agent_id": mailbox.agent_key or None,
        "flow_id": None if mailbox.agent_key else mailbox.flow_key,
        "tenant": mailbox.tenant,
        "input": run_input,
        "trigger": Trigger.MAIL,
        "principal": mailbox.owner,
        "connections": {MAILBOX_APP: mailbox.owner.get_username()},
        "connection_labels": {MAILBOX_APP: mailbox.address},
    }
    conversation = thread_conversation(message) if mailbox.agent_key else None
    note = ""
    try:
        try:
            run = check_start_run(**start, conversation_id=conversation)
        except (RunStateError, ConversationNotFoundError) as error:
            # The thread's last turn is still going, or its conversation is another principal's
            # (the mailbox changed hands): a new conversation.
            note = f"started a new conversation: {error}"
            run = check_start_run(**start)
    except DomainError as error:
        logger.warning("mail to %s: no run started: %s", mailbox.address, error)
        MailMessage.objects.filter(pk=message.pk).update(note=f"no run started: {error}")
        return None
    MailMessage.objects.filter(pk=message.pk).update(run=run, conversation_id=run.conversation_id, note=note)
    return run


MAILBOX_FIELDS = (
    "address",
    "owner",
    "agent_key",
    "flow_key",
    "allowed_senders",
    "size_limit",
    "require_dkim",
    "enabled",
)


MAILBOXES = "{tenant}'s mailboxes"


def check_save_mailbox(
    *, tenant, fields: dict[str, Any], mailbox: Mailbox | None = None, acting_user, surface: str
) -> Mailbox:
    """Create a mailbox of ``tenant`` or change ``mailbox`` (only the ``fields`` given): the one
    way mailboxes are written, from the API and the admin alike, by whoever may change the
    tenant's configuration. ``owner`` is a username."""
    check_may_configure(acting_user, tenant, what=MAILBOXES.format(tenant=tenant.slug), surface=surface)
    unknown = sorted(set(fields) - set(MAILBOX_FIELDS))
    if unknown:
        raise MailboxInputError([f"/{name}: not a field of a mailbox" for name in unknown])
    current = {name: getattr(mailbox, name) for name in MAILBOX_FIELDS} if mailbox is not None else {}
    if mailbox is not None:
        current["owner"] = mailbox.owner.get_username()
    merged = {"allowed_senders": [], "size_limit": DEFAULT_SIZE_LIMIT, "require_dkim": False, "enabled": True}
    merged |= current | dict(fields)
    errors, owner = mailbox_errors(merged, tenant=tenant, mailbox=mailbox)
    if errors:
        raise MailboxInputError(errors)
    merged["owner"] = owner
    merged["address"] = merged["address"].strip().lower()
    return do_save_mailbox(
        tenant=tenant, fields=merged, mailbox=mailbox, acting_user=acting_user, surface=surface
    )


def mailbox_errors(fields: dict[str, Any], *, tenant, mailbox: Mailbox | None) -> tuple[list[str], Any]:
    """What is wrong with a mailbox's fields (``/<field>: <message>`` lines), and its owner."""
    errors: list[str] = []
    address = fields.get("address")
    if not isinstance(address, str) or not address.strip():
        errors.append("/address: an address is required")
    else:
        try:
            validate_email(address.strip())
        except ValidationError:
            errors.append(f"/address: {address!r} is not an email address")
        else:
            taken = Mailbox.objects.filter(address=address.strip().lower())
            if mailbox is not None:
                taken = taken.exclude(pk=mailbox.pk)
            if taken.exists():
                errors.append(f"/address: {address.strip().lower()} is already a mailbox")
    owner = None
    username = fields.get("owner")
    if not isinstance(username, str) or not username:
        errors.append("/owner: a mailbox needs an owner (a username)")
    else:
        owner = (
            get_user_model()
            .objects.filter(username=username, membership__tenant=tenant, is_active=True)
            .select_related("membership")
            .first()
        )
        if owner is None:
            errors.append(f"/owner: there is no person {username!r} in this tenant")
        elif owner.membership.is_service_account:
            errors.append(f"/owner: {username!r} is a service account; a mailbox's owner is a person")
    agent, flow = fields.get("agent_key") or "", fields.get("flow_key") or ""
    registry = get_registry()
    if bool(agent) == bool(flow):
        errors.append("/agentId: give exactly one of an agent and a flow for its mail to start")
    elif agent and registry.agent(agent) is None:
        errors.append(f"/agentId: there is no agent {agent!r}")
    elif flow:
        found = registry.flow(flow)
        if found is None:
            errors.append(f"/flowId: there is no flow {flow!r}")
        elif "mail" not in found.input_model.model_fields:
            errors.append(f'/flowId: flow {flow!r} takes no mail (its input has no field "mail")')
    senders = fields.get("allowed_senders")
    if not isinstance(senders, list) or not all(isinstance(item, str) and item.strip() for item in senders):
        errors.append('/allowedSenders: a list of addresses or globs, e.g. ["*@example.com"]')
    limit, ceiling = fields.get("size_limit"), setting("KINDGI_MAIL_MAX_BYTES")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= ceiling:
        errors.append(f"/sizeLimit: a number of bytes from 1 to {ceiling} (KINDGI_MAIL_MAX_BYTES)")
    for name, pointer in (("require_dkim", "requireDkim"), ("enabled", "enabled")):
        if not isinstance(fields.get(name), bool):
            errors.append(f"/{pointer}: must be true or false")
    return errors, owner


def mailbox_snapshot(mailbox: Mailbox) -> dict[str, Any]:
    return {name: getattr(mailbox, name) for name in MAILBOX_FIELDS if name != "owner"} | {
        "owner": mailbox.owner.get_username()
    }


MAILBOX = SettingKind(noun="mailbox", snapshot=mailbox_snapshot, label=lambda mailbox: mailbox.address)


@transaction.atomic
def do_save_mailbox(
    *, tenant, fields: dict[str, Any], mailbox: Mailbox | None, acting_user, surface: str
) -> Mailbox:
    """Write a valid mailbox, and its record in the tenant's audit chain."""
    mailbox = mailbox or Mailbox(tenant=tenant)
    for name, value in fields.items():
        setattr(mailbox, name, value)
    mailbox.tenant = tenant
    return do_save_setting(mailbox, kind=MAILBOX, tenant=tenant, acting_user=acting_user, surface=surface)


def check_delete_mailbox(mailbox: Mailbox, *, acting_user, surface: str) -> None:
    tenant = mailbox.tenant
    check_may_configure(acting_user, tenant, what=MAILBOXES.format(tenant=tenant.slug), surface=surface)
    do_delete_setting(mailbox, kind=MAILBOX, tenant=tenant, acting_user=acting_user, surface=surface)
