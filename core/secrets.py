"""The configured provider keys: redacted from prompts, never shown, journaled or logged."""

import json
import os
from typing import Any

from core.conf import setting
from core.redaction import REDACTED


def provider_secrets() -> list[str]:
    names = setting("KINDGI_PROVIDER_KEY_VARIABLES")
    return [value for name in names if (value := os.environ.get(name, ""))]


def scrub_secrets(value: Any) -> Any:
    """``value`` (JSON data) with every configured provider key, wherever it appears in a string,
    replaced by ``[REDACTED]``. Whatever a tool returns or a model says, the journal never holds
    a provider key."""
    secrets = provider_secrets()
    if not secrets:
        return value
    dumped = json.dumps(value)
    scrubbed = _scrubbed(dumped, secrets)
    return value if scrubbed == dumped else json.loads(scrubbed)


def scrub_secrets_in_json(text: str) -> str:
    """The same, for data already made into JSON text."""
    return _scrubbed(text, provider_secrets())


def _scrubbed(text: str, secrets: list[str]) -> str:
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(json.dumps(secret)[1:-1], REDACTED)
    return text


def fingerprint(secret: str) -> str:
    """A mark that changes when ``secret`` changes and tells nothing of it without the site's
    SECRET_KEY (an HMAC): what an audit entry keeps of a secret that was set or rotated."""
    import hashlib
    import hmac

    from django.conf import settings

    if not secret:
        return ""
    mark = hmac.new(settings.SECRET_KEY.encode(), secret.encode(), hashlib.sha256).hexdigest()
    return f"hmac:{mark[:12]}"
