"""Small helpers for showing data in the admin."""

import json

from django.utils.html import format_html


def pretty_json(value) -> str:
    """JSON, indented and escaped, in a <pre>."""
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))
