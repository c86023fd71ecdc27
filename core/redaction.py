"""Redact a user's prompt before it is stored or sent to a model."""

import re
from collections.abc import Iterable

REDACTED = "[REDACTED]"
LOCAL_PATH = "[LOCAL_PATH]"

_AUTHORIZATION = re.compile(r"\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=:-]+", re.IGNORECASE)
_SECRET_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")
_HOME_PATH = re.compile(
    r"(?:/home/|/Users/|[A-Za-z]:\\Users\\)[^\s\"'`<>|]*",
)


def redact_prompt(text: str, *, secrets: Iterable[str] = ()) -> str:
    """Authorization values and ``sk-`` keys become ``[REDACTED]``, home paths ``[LOCAL_PATH]``,
    and each exact secret value (the configured provider keys) ``[REDACTED]``."""
    for secret in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return _HOME_PATH.sub(LOCAL_PATH, redact_credentials(text))


def redact_credentials(text: str) -> str:
    """Authorization values (``Bearer …``, ``Basic …``) and ``sk-`` keys become ``[REDACTED]``."""
    text = _AUTHORIZATION.sub(lambda match: f"{match.group(1)} {REDACTED}", text)
    return _SECRET_KEY.sub(REDACTED, text)
