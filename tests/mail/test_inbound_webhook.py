"""Mail from Mailgun's inbound webhook, through anymail: a valid signature starts the run as the
SMTP receiver would; a forged one is refused and starts nothing."""

import hashlib
import hmac
import time

import pytest
from django.test import Client

from mail.models import MailMessage
from runs.models import Run
from tests.mail.conftest import mail

pytestmark = pytest.mark.django_db(transaction=True)
KEY = "mailgun-signing-key-0123456789abcdef"
URL = "/mail/inbound/mailgun/"


@pytest.fixture
def signing_key(settings):
    settings.ANYMAIL = {"MAILGUN_WEBHOOK_SIGNING_KEY": KEY}
    return KEY


def posted(*, key: str = KEY, raw: bytes | None = None, **changes) -> dict:
    timestamp, token = str(int(time.time())), "a-token-of-mailguns-4f3c2b1a"
    signature = hmac.new(key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256).hexdigest()
    form = {
        "body-mime": (raw or mail().as_bytes()).decode(),
        "recipient": "support@acme.test",
        "sender": "bob@example.com",
        "timestamp": timestamp,
        "token": token,
        "signature": signature,
    }
    return form | changes


def test_a_signed_inbound_mail_starts_the_mailboxs_run(signing_key, mailbox):
    response = Client().post(URL, posted())
    assert response.status_code == 200, response.content
    run = Run.objects.get()
    assert (run.trigger, run.agent_key) == ("mail", "kindgi-mail.responder")
    assert run.input["mail"]["subject"] == "Where is my order?"
    assert MailMessage.objects.get().run == run


def test_a_forged_signature_is_refused_and_starts_nothing(signing_key, mailbox):
    forged = Client().post(URL, posted(key="not-the-key"))
    assert forged.status_code == 400
    tampered = posted()
    tampered["timestamp"] = str(int(tampered["timestamp"]) + 1)
    assert Client().post(URL, tampered).status_code == 400
    assert not Run.objects.exists()
    assert not MailMessage.objects.exists()


def test_without_a_signing_key_the_webhook_is_not_there(mailbox):
    response = Client().post(URL, posted())
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert not Run.objects.exists()


def test_the_envelope_sender_mailgun_names_is_held_to_the_allow_list_too(signing_key, mailbox):
    from mail.models import MailRefusal

    mailbox.allowed_senders = ["example.com"]
    mailbox.save()
    response = Client().post(URL, posted(sender="attacker@evil.example"))
    assert response.status_code == 200  # anymail took it; Kindgi refused it
    refusal = MailRefusal.objects.get()
    assert (refusal.reason, refusal.sender) == ("sender-not-allowed", "attacker@evil.example")
    assert not Run.objects.exists()
