"""Step-up: a decision on an approval whose rule says ``stepUp`` is taken only after the reviewer
confirms it with a passkey, so that an agent driving a signed-in browser, a stolen session or a
forwarded mail link cannot decide alone.

The passkey signs a challenge made for one decision: SHA-256 of a fresh nonce, the approval's id,
the digest of the call it approves and the decision. The challenge is kept (used once, for a few
minutes); the decision door (``approvals.actions.decisions``) checks the passkey's answer against
it, inside the decision's transaction. A surface that cannot do WebAuthn (an API token, the CLI,
the admin's actions, bulk decisions) brings no answer, and is refused, pointing to the console.
"""

import base64
import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.urls import reverse
from django.utils import timezone

from approvals.exceptions import DecisionForbiddenError
from approvals.models import Approval, StepUpChallenge
from core.public import public_url
from tenants.passkeys import PasskeyError, RelyingParty, assertion_options, challenge_of, check_assertion

CHALLENGE_SECONDS = 300


@dataclass(frozen=True)
class StepUp:
    """A passkey's answer brought with a decision, and the site the browser reached."""

    credential: Any
    party: RelyingParty


def needs_step_up(approval: Approval) -> bool:
    return bool((approval.gate or {}).get("stepUp"))


def begin(user, approval: Approval, decision: str, party: RelyingParty) -> str:
    """The options for the browser to ask ``user``'s passkey to confirm ``decision`` on
    ``approval`` (JSON), with a challenge kept for that decision alone."""
    nonce = secrets.token_bytes(32)
    bound = hashlib.sha256(
        b"|".join([nonce, str(approval.pk).encode(), approval.digest.encode(), decision.encode()])
    )
    challenge = bound.digest()
    options = assertion_options(user, challenge, party)
    StepUpChallenge.objects.create(
        user=user,
        approval=approval,
        decision=decision,
        challenge=base64.urlsafe_b64encode(challenge).rstrip(b"=").decode(),
        expires_at=timezone.now() + timedelta(seconds=CHALLENGE_SECONDS),
    )
    return options


def confirm(user, approval: Approval, decision: str, step_up: StepUp | None) -> None:
    """Precondition: inside the decision's transaction (a refusal takes back all of it). Refuses
    unless ``step_up`` is ``user``'s passkey's answer to a live challenge made for this approval
    and this decision; the challenge is spent with the decision, so an answer decides once."""
    if step_up is None:
        page = public_url(reverse("console:approval", args=[approval.pk]))
        raise DecisionForbiddenError(
            "this approval asks for the reviewer's passkey: decide it in the console, where your passkey "
            f"confirms it ({page}), or from its mail link; an API token or the CLI cannot"
        )
    try:
        challenge = challenge_of(step_up.credential)
    except PasskeyError as error:
        raise DecisionForbiddenError(f"the passkey did not confirm this decision: {error}") from None
    spent = StepUpChallenge.objects.filter(
        challenge=challenge,
        user=user,
        approval=approval,
        decision=decision,
        used_at__isnull=True,
        expires_at__gt=timezone.now(),
    ).update(used_at=timezone.now())
    if not spent:
        raise DecisionForbiddenError(
            "the passkey did not confirm this decision: its answer is to another challenge, one used "
            "already or expired; confirm again"
        )
    try:
        check_assertion(user, step_up.credential, challenge=challenge, party=step_up.party)
    except PasskeyError as error:
        raise DecisionForbiddenError(f"the passkey did not confirm this decision: {error}") from None
