"""The one base of every app's errors, and what each is on the wire."""


class DomainError(Exception):
    """An error an app raises. ``http_status`` and ``code`` say what it is in the API's error
    body (those a caller may cause set their own; the base is an error of the server's);
    ``errors``, when set, name each bad field (``/<json-pointer>: <message>``)."""

    http_status = 500
    code = "internal_error"
    errors: list[str] | None = None
