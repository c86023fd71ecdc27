"""The API's error body, ``{"error": {"code", "message", "details"}}``, and its field details."""

from collections.abc import Iterable


def error_body(code: str, message: str, details: dict | None = None) -> dict:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def field_details(errors: Iterable[str]) -> dict:
    """Details for ``/<json-pointer>: <message>`` lines: the lines as they are, and each field's
    message keyed by its pointer without the leading slash (``input/orderId``). Lines about the
    body as a whole (``/: …``) name no field: when no line names one, the details are empty."""
    lines = list(errors)
    fields: dict[str, str] = {}
    for line in lines:
        pointer, _, message = line.partition(": ")
        field = pointer.removeprefix("/")
        if field and message:
            fields[field] = f"{fields[field]}; {message}" if field in fields else message
    return {"errors": lines, "fields": fields} if fields else {}


def domain_error(exc) -> tuple[int, dict]:
    """The HTTP status and error body of an app's error (``core.errors.DomainError``)."""
    errors = exc.errors
    details = field_details(errors) if errors else {}
    message = "; ".join(errors) if errors else str(exc)
    return exc.http_status, error_body(exc.code, message, details)
