from base64 import b64decode
from urllib.parse import parse_qs, urlparse

from django.utils.dateparse import parse_datetime
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response

BAD_CURSOR = "not a cursor this API gave out: pass nextCursor as it came, or leave cursor out"


class ItemsCursorPagination(CursorPagination):
    """``{"items": [...], "nextCursor": "<cursor>" | null}``; pass ``?cursor=`` for the next page."""

    page_size = 50
    page_size_query_param = "limit"
    max_page_size = 200
    ordering = "-created_at"

    def get_page_size(self, request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        try:
            size = int(raw)
        except ValueError:
            size = 0
        if not 1 <= size <= self.max_page_size:
            raise ValidationError(
                {"limit": f"must be a whole number from 1 to {self.max_page_size}, not {raw!r}"}
            )
        return size

    def decode_cursor(self, request):
        """A cursor is the API's own: one it did not give out (garbage, or crafted to point at a
        position that is no time) is a bad request, never an error of the server."""
        encoded = request.query_params.get(self.cursor_query_param)
        if encoded is not None and not _base64_of_something(encoded):
            raise ValidationError({self.cursor_query_param: BAD_CURSOR})
        try:
            cursor = super().decode_cursor(request)
        except NotFound:
            raise ValidationError({self.cursor_query_param: BAD_CURSOR}) from None
        if cursor is not None and cursor.position is not None and _not_a_time(cursor.position):
            raise ValidationError({self.cursor_query_param: BAD_CURSOR})
        return cursor

    def get_paginated_response(self, data):
        return Response({"items": data, "nextCursor": self._next_cursor()})

    def _next_cursor(self) -> str | None:
        link = self.get_next_link()
        if not link:
            return None
        return parse_qs(urlparse(link).query).get(self.cursor_query_param, [None])[0]

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"] = {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": self.max_page_size,
                    "default": self.page_size,
                }
        return parameters

    def get_paginated_response_schema(self, schema):
        return {
            "type": "object",
            "required": ["items", "nextCursor"],
            "properties": {
                "items": schema,
                "nextCursor": {
                    "type": "string",
                    "nullable": True,
                    "description": "Pass as ?cursor= for the next page.",
                },
            },
        }


def _base64_of_something(encoded: str) -> bool:
    """Strict base64 of a non-empty text (the lenient decoder reads "%%%" as an empty cursor)."""
    try:
        return bool(b64decode(encoded.encode("ascii"), validate=True))
    except (ValueError, UnicodeEncodeError):
        return False


def _not_a_time(position: str) -> bool:
    try:
        return parse_datetime(position) is None
    except ValueError:
        return True
