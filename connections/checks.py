"""Connections' tokens are sealed with a key of the site's own in production."""

from django.conf import settings
from django.core.checks import Error, register

from connections.crypto import key_problem
from core.conf import setting

HINT = (
    'Set KINDGI_ENCRYPTION_KEY to a key made with python -c "from cryptography.fernet import Fernet; '
    'print(Fernet.generate_key().decode())" (README, "Connections").'
)


@register("kindgi", deploy=False)
def check_encryption_key(app_configs=None, **kwargs):
    if (problem := key_problem()) is not None:
        return [Error(f"KINDGI_ENCRYPTION_KEY: {problem}.", hint=HINT, id="kindgi.E010")]
    if not settings.DEBUG and not setting("KINDGI_ENCRYPTION_KEY"):
        return [
            Error(
                "KINDGI_ENCRYPTION_KEY is not set: a production site will not seal people's connection "
                "tokens with a key derived from SECRET_KEY.",
                hint=HINT,
                id="kindgi.E010",
            )
        ]
    return []
