"""A raw mail read into what Kindgi keeps of it, with the standard library's parser."""

import email
import email.policy
import email.utils
from dataclasses import dataclass, field
from email.message import EmailMessage

# Kindgi's own outgoing mail carries this header: mail that has it is never answered.
LOOP_HEADER = "X-Kindgi-Loop"
BULK_PRECEDENCE = frozenset({"bulk", "list", "junk"})
DAEMONS = frozenset({"mailer-daemon", "postmaster"})
MAX_HEADER = 998


@dataclass(frozen=True)
class Attachment:
    filename: str
    content_type: str
    content: bytes

    @property
    def size(self) -> int:
        return len(self.content)


@dataclass(frozen=True, kw_only=True)
class ParsedMail:
    message_id: str
    in_reply_to: str
    references: list[str]
    from_address: str
    to: list[str]
    subject: str
    text: str
    html: str
    headers: list[list[str]]
    attachments: list[Attachment] = field(default_factory=list)
    message: EmailMessage | None = None

    def header(self, name: str) -> str:
        value = self.message.get(name) if self.message is not None else None
        return str(value).strip() if value is not None else ""


def parse(raw: bytes) -> ParsedMail:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    body = message.get_body(preferencelist=("plain",))
    html = message.get_body(preferencelist=("html",))
    attachments = [
        Attachment(
            filename=part.get_filename() or "",
            content_type=part.get_content_type(),
            content=part.get_payload(decode=True) or b"",
        )
        for part in message.iter_attachments()
    ]
    return ParsedMail(
        message_id=_clip(str(message.get("Message-ID", "")).strip()),
        in_reply_to=_clip(str(message.get("In-Reply-To", "")).strip()),
        references=str(message.get("References", "")).split(),
        from_address=_first_address(message.get_all("From", [])),
        to=[address for _, address in email.utils.getaddresses(message.get_all("To", [])) if address],
        subject=_clip(str(message.get("Subject", "")).strip()),
        text=_content(body),
        html=_content(html),
        headers=[[name, _clip(str(value))] for name, value in message.items()],
        attachments=attachments,
        message=message,
    )


def _content(part) -> str:
    if part is None:
        return ""
    try:
        return part.get_content()
    except (LookupError, ValueError):  # an unknown charset, a broken transfer encoding
        payload = part.get_payload(decode=True) or b""
        return payload.decode("utf-8", errors="replace")


def _first_address(values) -> str:
    found = [address for _, address in email.utils.getaddresses(values) if address]
    return _clip(found[0].lower()) if found else ""


def _clip(value: str) -> str:
    return value[:MAX_HEADER]


def envelope_address(envelope_sender: str | None) -> str | None:
    """The SMTP MAIL FROM as an address: "" for a bounce's null sender, None when not known."""
    if envelope_sender is None:
        return None
    return envelope_sender.strip().strip("<>").strip().lower()


def automatic(mail: ParsedMail, envelope_sender: str | None) -> tuple[str, str] | None:
    """Why ``mail`` is mail no one should answer (reason, detail), or None. RFC 3834's
    Auto-Submitted, the Precedence of bulk and list mail, a bounce's null sender or daemon, and
    Kindgi's own mail coming back. ``envelope_sender`` None: not known (its From stands in)."""
    if mail.header(LOOP_HEADER):
        return "loop", f"it carries {LOOP_HEADER}: Kindgi sent it"
    auto = mail.header("Auto-Submitted").lower()
    if auto and auto != "no":
        return "auto-reply", f"Auto-Submitted: {auto}"
    precedence = mail.header("Precedence").lower()
    if precedence in BULK_PRECEDENCE:
        return "bulk", f"Precedence: {precedence}"
    envelope = envelope_address(envelope_sender)
    sender = mail.from_address if envelope is None else envelope
    if not sender:
        return "bounce", "the envelope sender is empty (a bounce)"
    local = sender.split("@", 1)[0]
    if local in DAEMONS:
        return "bounce", f"the sender is {local}"
    return None
