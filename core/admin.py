"""What the apps' admins share: showing JSON, and admins that only show."""

import json

from django.utils.html import format_html


def pretty_json(value) -> str:
    """JSON, indented and escaped, in a <pre>."""
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


class ReadOnlyAdminMixin:
    """For records the application writes (runs, journals, decisions): look, never touch."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
