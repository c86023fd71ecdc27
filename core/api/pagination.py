from urllib.parse import parse_qs, urlparse

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response


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

    def get_paginated_response(self, data):
        return Response({"items": data, "nextCursor": self._next_cursor()})

    def _next_cursor(self) -> str | None:
        link = self.get_next_link()
        if not link:
            return None
        return parse_qs(urlparse(link).query).get(self.cursor_query_param, [None])[0]

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
