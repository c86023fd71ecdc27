"""Kindgi's webhook deliveries as the Standard Webhooks specification signs them, for the
service that receives them (no Django needed) and for the server that sends them.

A delivery carries ``webhook-id`` (the same for each attempt of one delivery: a receiver that
has seen it ignores it), ``webhook-timestamp`` (seconds since the epoch, of this attempt) and
``webhook-signature``: ``v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">``, one for each
of the webhook's secrets while an old one is being replaced, separated by spaces. A secret is
written ``whsec_<base64 of the key>``; one set as plain text (at least 16 characters) is the
key made of its UTF-8 bytes, ``as_standard_secret`` writes it the standard way. Receivers
already holding the ``standardwebhooks`` library (or Svix's) can verify with it instead.

    from kindgi.webhooks import verify, WebhookVerificationError

    try:
        event = verify(request.headers, request.body, "whsec_…")
    except WebhookVerificationError as error:
        return HttpResponse(str(error), status=400)
"""

import base64
import binascii
import hashlib
import hmac
import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

SECRET_PREFIX = "whsec_"
# How far a delivery's timestamp may be from the receiver's clock: an older one is a replay.
TOLERANCE_SECONDS = 5 * 60


class WebhookVerificationError(Exception):
    """The delivery is not one Kindgi signed with this secret, or not a fresh one."""


def secret_key(secret: str) -> bytes:
    """The key ``secret`` stands for: the bytes ``whsec_<base64>`` encodes, or plain text's."""
    if not secret.startswith(SECRET_PREFIX):
        return secret.encode()
    try:
        return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError(
            "the secret is whsec_ followed by something that is not base64"
        ) from None


def as_standard_secret(secret: str) -> str:
    """``secret`` written as Standard Webhooks writes secrets: ``whsec_<base64 of the key>``."""
    return SECRET_PREFIX + base64.b64encode(secret_key(secret)).decode()


def signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    return "v1," + base64.b64encode(hmac.new(secret_key(secret), signed, hashlib.sha256).digest()).decode()


def signed_headers(message_id: str, body: bytes, secrets: Iterable[str], *, timestamp: int) -> dict[str, str]:
    """The three headers of a delivery of ``body``, signed with each of ``secrets``."""
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(secret, message_id, timestamp, body) for secret in secrets),
    }


def verify(
    headers: Mapping[str, str],
    body: bytes | str,
    secret: str,
    *,
    now: float | None = None,
    tolerance_seconds: int = TOLERANCE_SECONDS,
) -> dict[str, Any]:
    """The delivery's event (``{"id", "event", "occurredAt", "data"}``) if ``headers`` hold a
    signature of ``body`` made with ``secret`` less than five minutes from now; otherwise
    ``WebhookVerificationError`` saying why. Header names are matched in any case."""
    given = {name.lower(): value for name, value in headers.items()}
    missing = [
        name for name in ("webhook-id", "webhook-timestamp", "webhook-signature") if not given.get(name)
    ]
    if missing:
        raise WebhookVerificationError(f"not a signed delivery: no {', '.join(missing)} header")
    try:
        timestamp = int(given["webhook-timestamp"])
    except ValueError:
        raise WebhookVerificationError("webhook-timestamp is not a whole number of seconds") from None
    now = time.time() if now is None else now
    if timestamp < now - tolerance_seconds:
        raise WebhookVerificationError(
            f"the delivery was signed {int(now - timestamp)} s ago, more than {tolerance_seconds} s: "
            "a replay, or a clock that is wrong"
        )
    if timestamp > now + tolerance_seconds:
        raise WebhookVerificationError(
            f"the delivery is dated {int(timestamp - now)} s ahead: a clock that is wrong"
        )
    raw = body.encode() if isinstance(body, str) else bytes(body)
    expected = signature(secret, given["webhook-id"], timestamp, raw)
    offered = given["webhook-signature"].encode(errors="replace").split()  # bytes: any header compares
    if not any(hmac.compare_digest(expected.encode(), signature) for signature in offered):
        raise WebhookVerificationError("no signature matches: another secret, or a body that was changed")
    try:
        return json.loads(raw)
    except ValueError:
        raise WebhookVerificationError("the body is not JSON") from None
