"""Addresses people reach this server at, for what leaves it: mails, error messages."""

from urllib.parse import urljoin

from core.conf import setting


def public_url(path: str) -> str:
    """``path`` on this server as people reach it (``KINDGI_PUBLIC_URL``)."""
    return urljoin(setting("KINDGI_PUBLIC_URL").rstrip("/") + "/", path.lstrip("/"))
