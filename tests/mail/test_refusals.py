"""Mail that must start nothing: each is answered as it should be over real SMTP, starts no run,
and is recorded with its reason."""

import base64
import smtplib

import dkim
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from mail.models import MailMessage, MailRefusal
from runs.models import Run
from tests.mail.conftest import mail, send

pytestmark = pytest.mark.django_db(transaction=True)


def refused_with(receiver, message, *, envelope_sender=None) -> int:
    """The SMTP code the receiver refused ``message`` with."""
    with pytest.raises(smtplib.SMTPDataError) as refused:
        send(receiver, message, envelope_sender=envelope_sender)
    return refused.value.smtp_code


def only_refusal() -> MailRefusal:
    [refusal] = MailRefusal.objects.all()
    return refusal


def test_a_mail_with_a_message_id_already_received_starts_nothing_more(receiver, mailbox):
    send(receiver, mail())
    send(receiver, mail(text="the same mail, delivered twice"))
    assert Run.objects.count() == 1
    assert MailMessage.objects.count() == 1
    refusal = only_refusal()
    assert (refusal.reason, refusal.smtp_code, refusal.message_id) == ("duplicate", 250, "<m1@example.com>")


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"Auto_Submitted": "auto-replied"}, "auto-reply"),
        ({"Precedence": "bulk"}, "bulk"),
        ({"Precedence": "list"}, "bulk"),
        ({"X_Kindgi_Loop": "support@acme.test"}, "loop"),
    ],
)
def test_automatic_mail_and_kindgis_own_are_accepted_but_never_answered(receiver, mailbox, headers, reason):
    send(receiver, mail(**headers))
    assert not Run.objects.exists()
    assert not MailMessage.objects.exists()
    refusal = only_refusal()
    assert (refusal.reason, refusal.smtp_code) == (reason, 250)


@pytest.mark.parametrize("envelope_sender", ["", "MAILER-DAEMON@example.com"])
def test_a_bounce_is_never_answered(receiver, mailbox, envelope_sender):
    send(receiver, mail(), envelope_sender=envelope_sender)
    assert not Run.objects.exists()
    assert only_refusal().reason == "bounce"


def test_a_sender_outside_the_allow_list_is_refused(receiver, mailbox):
    mailbox.allowed_senders = ["*@customers.example", "carol@example.com"]
    mailbox.save()
    assert refused_with(receiver, mail(sender="mallory@example.com")) == 550
    refusal = only_refusal()
    assert (refusal.reason, refusal.sender) == ("sender-not-allowed", "mallory@example.com")
    assert not Run.objects.exists()

    send(receiver, mail(sender="carol@example.com", message_id="<ok1@example.com>"))
    send(receiver, mail(sender="dan@customers.example", message_id="<ok2@example.com>"))
    assert Run.objects.count() == 2


def test_a_forged_from_does_not_carry_an_envelope_sender_outside_the_allow_list(receiver, mailbox):
    """MAIL FROM:<attacker@evil.example> with From: boss@trusted.example, and no DKIM asked for:
    the envelope sender is asked too, and named in the refusal."""
    mailbox.allowed_senders = ["trusted.example"]
    mailbox.save()
    spoofed = mail(sender="boss@trusted.example")
    with pytest.raises(smtplib.SMTPDataError) as refused:
        send(receiver, spoofed, envelope_sender="Attacker@Evil.example")
    assert refused.value.smtp_code == 550
    assert b"envelope sender (MAIL FROM) attacker@evil.example may not send" in refused.value.smtp_error
    refusal = only_refusal()
    assert (refusal.reason, refusal.sender) == ("sender-not-allowed", "attacker@evil.example")
    assert "MAIL FROM" in refusal.detail
    assert not Run.objects.exists()
    assert not MailMessage.objects.exists()

    # The same mail from an envelope sender on the list starts its run.
    send(
        receiver,
        mail(sender="boss@trusted.example", message_id="<ok@x>"),
        envelope_sender="ops@trusted.example",
    )
    assert Run.objects.count() == 1


def test_a_bounces_empty_envelope_sender_is_still_a_bounce_under_an_allow_list(receiver, mailbox):
    mailbox.allowed_senders = ["example.com"]
    mailbox.save()
    send(receiver, mail(), envelope_sender="")
    assert only_refusal().reason == "bounce"
    assert not Run.objects.exists()


def test_a_mail_over_the_mailboxs_size_limit_is_refused(receiver, mailbox):
    mailbox.size_limit = 2000
    mailbox.save()
    assert refused_with(receiver, mail(text="x" * 5000)) == 552
    refusal = only_refusal()
    assert refusal.reason == "too-big"
    assert refusal.size > 5000
    assert not Run.objects.exists()


def test_the_receiver_refuses_more_than_its_limit_itself(settings, mailbox):
    from mail.smtp import MailReceiver
    from tests.live_server import free_port

    settings.KINDGI_MAIL_MAX_BYTES = 3000
    server = MailReceiver(port=free_port())
    server.start()
    try:
        with pytest.raises(smtplib.SMTPException) as refused:
            send(server, mail(text="y" * 10_000))
        assert "552" in str(refused.value) or getattr(refused.value, "smtp_code", None) == 552
    finally:
        server.stop()
    assert not Run.objects.exists()


def test_mail_to_no_mailbox_is_refused_at_the_recipient(receiver, mailbox):
    with pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
        send(receiver, mail(to="nobody@acme.test"))
    assert refused.value.recipients["nobody@acme.test"][0] == 550
    assert not Run.objects.exists()


def test_connections_beyond_the_limit_are_told_to_come_back(settings, mailbox):
    from mail.smtp import MailReceiver
    from tests.live_server import free_port

    settings.KINDGI_MAIL_MAX_CONNECTIONS = 1
    server = MailReceiver(port=free_port())
    server.start()
    try:
        first = smtplib.SMTP(server.hostname, server.port, timeout=10)
        try:
            with pytest.raises(smtplib.SMTPConnectError) as busy:
                smtplib.SMTP(server.hostname, server.port, timeout=10)
            assert busy.value.smtp_code == 421
        finally:
            first.quit()
    finally:
        server.stop()


# DKIM


@pytest.fixture
def signing_key(settings):
    """A key of example.com's, its public half published (as DNS would) for selector "s1"."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    settings.KINDGI_MAIL_DKIM_KEYS = {
        "s1._domainkey.example.com": f"v=DKIM1; k=rsa; p={base64.b64encode(public).decode()}"
    }
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def signed(message, key: bytes, *, domain: bytes = b"example.com") -> bytes:
    raw = message.as_bytes()
    signature = dkim.sign(
        raw, b"s1", domain, key, include_headers=[b"from", b"to", b"subject", b"message-id"]
    )
    return signature + raw


def send_raw(receiver, raw: bytes, sender: str = "bob@example.com") -> None:
    with smtplib.SMTP(receiver.hostname, receiver.port, timeout=30) as client:
        client.sendmail(sender, ["support@acme.test"], raw)


def test_a_required_dkim_signature_must_verify(receiver, mailbox, signing_key):
    mailbox.require_dkim = True
    mailbox.save()

    send_raw(receiver, signed(mail(), signing_key))
    assert Run.objects.count() == 1

    tampered = signed(mail(message_id="<m2@example.com>"), signing_key).replace(
        b"has not arrived", b"has arrived"
    )
    with pytest.raises(smtplib.SMTPDataError) as refused:
        send_raw(receiver, tampered)
    assert refused.value.smtp_code == 550
    with pytest.raises(smtplib.SMTPDataError):
        send_raw(receiver, mail(message_id="<m3@example.com>").as_bytes())
    reasons = list(MailRefusal.objects.order_by("created_at").values_list("reason", "detail"))
    assert [reason for reason, _ in reasons] == ["dkim-failed", "dkim-failed"]
    assert "no DKIM signature that verifies" in reasons[0][1] or "does not verify" in reasons[0][1]
    assert Run.objects.count() == 1


def test_a_dkim_signature_of_another_domain_does_not_vouch_for_the_sender(
    receiver, mailbox, signing_key, settings
):
    settings.KINDGI_MAIL_DKIM_KEYS = {
        "s1._domainkey.elsewhere.example": settings.KINDGI_MAIL_DKIM_KEYS["s1._domainkey.example.com"]
    }
    mailbox.require_dkim = True
    mailbox.save()
    with pytest.raises(smtplib.SMTPDataError):
        send_raw(receiver, signed(mail(), signing_key, domain=b"elsewhere.example"))
    assert "not its sender's domain example.com" in only_refusal().detail
    assert not Run.objects.exists()
