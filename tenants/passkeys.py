"""People's passkeys (WebAuthn, with the ``webauthn`` library): registering one, listing and
removing one's own, and checking a passkey's answer to a challenge.

The relying party is the site as the browser reached it: its host (without the port) is the
RP ID and its scheme and host the origin, both from the request (whose host Django's
``ALLOWED_HOSTS`` has checked). A passkey made at one host works only there.
"""

import base64
import json
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from webauthn import (
    base64url_to_bytes,
    generate_authentication_options,
    generate_registration_options,
    options_to_json,
    verify_authentication_response,
    verify_registration_response,
)
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from core.errors import DomainError
from tenants.models import Passkey

SITE_NAME = "Kindgi"
# The most passkeys one person keeps, and the longest answer a browser may send.
MOST_PASSKEYS = 10
MOST_CREDENTIAL_BYTES = 16_384


class PasskeyError(DomainError):
    """A passkey's answer that proves nothing, or a registration that cannot be made."""

    http_status = 400
    code = "invalid_input"


@dataclass(frozen=True)
class RelyingParty:
    """Who the passkey is for: the site as the browser reached it."""

    id: str
    origin: str

    @classmethod
    def of(cls, request) -> "RelyingParty":
        host = request.get_host()
        return cls(
            id=host.rsplit(":", 1)[0] if not host.endswith("]") else host, origin=f"{request.scheme}://{host}"
        )


def registration_options(user, party: RelyingParty) -> tuple[str, str]:
    """The options a browser's ``navigator.credentials.create`` takes (JSON), and the challenge to
    keep until the answer comes (base64url)."""
    if Passkey.objects.filter(user=user).count() >= MOST_PASSKEYS:
        raise PasskeyError(f"you have {MOST_PASSKEYS} passkeys already: remove one first")
    options = generate_registration_options(
        rp_id=party.id,
        rp_name=SITE_NAME,
        user_name=user.get_username(),
        user_id=str(user.pk).encode(),
        user_display_name=user.get_full_name() or user.get_username(),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED,
            user_verification=UserVerificationRequirement.REQUIRED,
        ),
        exclude_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(key.credential_id))
            for key in Passkey.objects.filter(user=user)
        ],
    )
    return options_to_json(options), _text(options.challenge)


def register(user, *, name: str, credential: Any, challenge: str, party: RelyingParty) -> Passkey:
    """Keep the passkey the browser made for ``challenge``, once its answer checks out."""
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise PasskeyError("name: what you call this passkey, up to 100 characters (e.g. laptop)")
    try:
        verified = verify_registration_response(
            credential=_credential(credential),
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=party.id,
            expected_origin=party.origin,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError, AttributeError) as error:
        raise PasskeyError(f"the passkey was not made: {error}") from None
    credential_id = _text(verified.credential_id)
    if Passkey.objects.filter(credential_id=credential_id).exists():
        raise PasskeyError("this passkey is registered already")
    return Passkey.objects.create(
        user=user,
        name=name,
        credential_id=credential_id,
        public_key=verified.credential_public_key,
        sign_count=verified.sign_count,
    )


def assertion_options(user, challenge: bytes, party: RelyingParty) -> str:
    """The options a browser's ``navigator.credentials.get`` takes for ``user``'s passkeys."""
    keys = list(Passkey.objects.filter(user=user))
    if not keys:
        raise PasskeyError("you have no passkey yet: register one on the console's Passkeys page first")
    options = generate_authentication_options(
        rp_id=party.id,
        challenge=challenge,
        allow_credentials=[
            PublicKeyCredentialDescriptor(id=base64url_to_bytes(key.credential_id)) for key in keys
        ],
        user_verification=UserVerificationRequirement.REQUIRED,
    )
    return options_to_json(options)


def challenge_of(credential: Any) -> str:
    """The challenge a passkey's answer says it signed (base64url), to find what it answers."""
    try:
        client_data = json.loads(base64url_to_bytes(_credential(credential)["response"]["clientDataJSON"]))
        return str(client_data["challenge"])
    except (WebAuthnException, ValueError, KeyError, TypeError, AttributeError) as error:
        raise PasskeyError(f"not a passkey's answer: {error}") from None


@transaction.atomic
def check_assertion(user, credential: Any, *, challenge: str, party: RelyingParty) -> Passkey:
    """The passkey of ``user``'s that signed ``challenge``, once its answer checks out (its
    signature, the site, user verification, a counter that went forward)."""
    data = _credential(credential)
    key = Passkey.objects.select_for_update().filter(user=user, credential_id=str(data.get("id", ""))).first()
    if key is None:
        raise PasskeyError("this passkey is not one of yours")
    try:
        verified = verify_authentication_response(
            credential=data,
            expected_challenge=base64url_to_bytes(challenge),
            expected_rp_id=party.id,
            expected_origin=party.origin,
            credential_public_key=bytes(key.public_key),
            credential_current_sign_count=key.sign_count,
            require_user_verification=True,
        )
    except (WebAuthnException, ValueError, KeyError, TypeError, AttributeError) as error:
        raise PasskeyError(f"the passkey's answer does not check out: {error}") from None
    key.sign_count, key.last_used_at = verified.new_sign_count, timezone.now()
    key.save(update_fields=["sign_count", "last_used_at"])
    return key


def _credential(credential: Any) -> dict:
    if isinstance(credential, str):
        if len(credential) > MOST_CREDENTIAL_BYTES:
            raise PasskeyError("the passkey's answer is too long")
        try:
            credential = json.loads(credential)
        except ValueError:
            raise PasskeyError("the passkey's answer is not JSON") from None
    if not isinstance(credential, dict):
        raise PasskeyError("the passkey's answer is not a credential")
    return credential


def _text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
