"""Secrets kept out of what is stored, shown and logged: one scrubbing step each way.

- What a person or a program sends, before it is stored (``scrub_secrets``): the configured
  provider keys, wherever they appear (the API's parser and the forms' middleware apply it to
  every body, so a key typed into a reviewer's name or a schedule's input never reaches a row).
- Text that is never data, before it is written or echoed (``scrub_text``): a log line, the web
  server's access log, an error message. Besides the provider keys it takes out credentials and
  ``sk-`` keys (``core.redaction``) and one-time decision-link tokens, which would let whoever
  reads a log decide as the reviewer the link was made for.
"""

import json
import os
import re
from typing import Any

from core.conf import setting
from core.redaction import REDACTED, redact_credentials


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


# A decision link's path: /console/decide/<token>/ (approvals.links makes them).
_DECISION_LINK = re.compile(r"(/decide/)[^/?#\s\"']+")


def scrub_text(text: str) -> str:
    """``text``, bound for a log line or an error message, with every configured provider key,
    credential, ``sk-`` key and decision-link token replaced by ``[REDACTED]``."""
    secrets = provider_secrets()
    if secrets:
        for secret in sorted(secrets, key=len, reverse=True):
            text = text.replace(secret, REDACTED)
    return _DECISION_LINK.sub(rf"\1{REDACTED}", redact_credentials(text))


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


def redact_url(url: str) -> str:
    """``url`` as a record may keep it: a password in it and the values of its query (where
    tokens travel) become ``[REDACTED]``."""
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", f":{REDACTED}@", 1)
    query = urlencode(
        [(key, REDACTED) for key, _ in parse_qsl(parts.query, keep_blank_values=True)], safe="[]"
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
