"""`kindgi.webhooks`: signing and verifying deliveries as Standard Webhooks does, checked
against the specification's own library."""

import base64
from datetime import UTC, datetime

import pytest
from standardwebhooks import Webhook as StandardWebhook

from kindgi.webhooks import WebhookVerificationError, as_standard_secret, signed_headers, verify

SECRET = "whsec_" + base64.b64encode(bytes(range(32))).decode()
BODY = b'{"id":"d1","event":"approval.decided","occurredAt":"2026-12-05T10:00:00Z","data":{}}'
NOW = 1_800_000_000


def test_what_kindgi_signs_the_library_verifies_and_the_other_way_round():
    headers = signed_headers("d1", BODY, [SECRET], timestamp=NOW)
    signed = StandardWebhook(SECRET).sign("d1", datetime.fromtimestamp(NOW, UTC), BODY.decode())
    assert verify(
        {"webhook-id": "d1", "webhook-timestamp": str(NOW), "webhook-signature": signed},
        BODY,
        SECRET,
        now=NOW,
    )
    assert headers["webhook-signature"] == signed


def test_a_plain_text_secret_is_the_key_of_its_bytes():
    assert (
        as_standard_secret("a-shared-secret-of-some-length")
        == "whsec_" + base64.b64encode(b"a-shared-secret-of-some-length").decode()
    )
    assert as_standard_secret(SECRET) == SECRET


@pytest.mark.parametrize(
    ("change", "said"),
    [
        ({"webhook-signature": None}, "no webhook-signature header"),
        ({"webhook-timestamp": "soon"}, "webhook-timestamp is not a whole number"),
        ({"webhook-timestamp": str(NOW + 600)}, "dated 600 s ahead"),
        ({"webhook-timestamp": str(NOW - 301)}, "signed 301 s ago, more than 300 s"),
        ({"webhook-id": "d2"}, "no signature matches"),
    ],
)
def test_what_does_not_verify_says_why(change, said):
    headers = {
        name: value
        for name, value in (signed_headers("d1", BODY, [SECRET], timestamp=NOW) | change).items()
        if value
    }
    with pytest.raises(WebhookVerificationError, match=said):
        verify(headers, BODY, SECRET, now=NOW)


def test_another_secret_a_changed_body_and_a_broken_secret_are_refused():
    headers = signed_headers("d1", BODY, [SECRET], timestamp=NOW)
    other = "whsec_" + base64.b64encode(b"o" * 32).decode()
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(headers, BODY, other, now=NOW)
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(headers, BODY.replace(b"decided", b"created"), SECRET, now=NOW)
    with pytest.raises(WebhookVerificationError, match="not base64"):
        verify(headers, BODY, "whsec_***", now=NOW)


def test_either_of_two_signatures_verifies_and_header_names_match_in_any_case():
    old = "whsec_" + base64.b64encode(b"o" * 32).decode()
    headers = signed_headers("d1", BODY, [SECRET, old], timestamp=NOW)
    shouted = {name.title(): value for name, value in headers.items()}
    assert verify(shouted, BODY.decode(), old, now=NOW)["event"] == "approval.decided"
    assert verify(shouted, BODY, SECRET, now=NOW)["id"] == "d1"


def test_a_signature_header_of_any_characters_is_refused_not_a_crash():
    headers = signed_headers("d1", BODY, [SECRET], timestamp=NOW) | {"webhook-signature": "v1,ünïcode"}
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(headers, BODY, SECRET, now=NOW)
