"""The configured provider keys: redacted from prompts, never shown, journaled or logged."""

import os

from django.conf import settings

DEFAULT_PROVIDER_KEY_VARIABLES = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GROQ_API_KEY",
    "MISTRAL_API_KEY",
    "GOOGLE_API_KEY",
    "KINDGI_OPENAI_COMPATIBLE_API_KEY",
)


def provider_secrets() -> list[str]:
    names = getattr(settings, "KINDGI_PROVIDER_KEY_VARIABLES", DEFAULT_PROVIDER_KEY_VARIABLES)
    return [value for name in names if (value := os.environ.get(name, ""))]
