"""Sealing secrets at rest: connection tokens and the PKCE verifiers of authorizations under way.

``KINDGI_ENCRYPTION_KEY`` holds one or more Fernet keys, comma-separated, newest first. The
first seals; every one of them opens, so a key is rotated by putting a new one in front, running
``python manage.py reseal_connections`` (which seals everything again with the new key), then
dropping the old one. Without a key, a development site (DEBUG) derives one from SECRET_KEY; the
``kindgi.E010`` check refuses a production site without one.
"""

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings

from core.conf import setting


class SealError(Exception):
    """A sealed value could not be opened: the key that sealed it is not configured."""


def _keys() -> list[bytes]:
    configured = [key.strip() for key in (setting("KINDGI_ENCRYPTION_KEY") or "").split(",") if key.strip()]
    if configured:
        return [key.encode() for key in configured]
    # Development only (kindgi.E010 stops production here): stable across restarts, never stored.
    digest = hashlib.sha256(f"kindgi-connections:{settings.SECRET_KEY}".encode()).digest()
    return [base64.urlsafe_b64encode(digest)]


def _fernet() -> MultiFernet:
    return MultiFernet([Fernet(key) for key in _keys()])


def seal(value: str) -> str:
    return _fernet().encrypt(value.encode()).decode() if value else ""


def unseal(sealed: str) -> str:
    if not sealed:
        return ""
    try:
        return _fernet().decrypt(sealed.encode()).decode()
    except InvalidToken:
        raise SealError("a sealed secret could not be opened with KINDGI_ENCRYPTION_KEY's keys") from None


def reseal(sealed: str) -> str:
    """``sealed`` sealed again with the newest key."""
    return _fernet().rotate(sealed.encode()).decode() if sealed else ""


def key_problem() -> str | None:
    """Why ``KINDGI_ENCRYPTION_KEY`` is unusable, or None."""
    for key in (setting("KINDGI_ENCRYPTION_KEY") or "").split(","):
        if key.strip():
            try:
                Fernet(key.strip().encode())
            except ValueError:
                return "each key must be 32 url-safe base64-encoded bytes (Fernet.generate_key())"
    return None
