"""What every request goes through before a view: a form post is scrubbed of provider keys, as
the API's bodies are (``core.secrets``), and a path or query that holds a NUL character is
refused, as is a query with more parameters than Django reads."""

from django.conf import settings
from django.core.exceptions import SuspiciousOperation, TooManyFieldsSent
from django.http import HttpResponseBadRequest, JsonResponse
from django.http.multipartparser import MultiPartParserError

from core.api.errors import error_body
from core.secrets import provider_secrets, scrub_secrets


class ScrubSecretsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        # The API's bodies are scrubbed by its parser (core.api.parsers), and are not forms.
        if (
            request.method == "POST"
            and not request.path.startswith("/api/")
            and (secrets := provider_secrets())
        ):
            try:
                posted = request.POST
            except (MultiPartParserError, SuspiciousOperation):
                # A form Django cannot read: the view answers for it, as without this step.
                return self.get_response(request)
            if any(secret in value for secret in secrets for values in posted.lists() for value in values[1]):
                scrubbed = posted.copy()
                for name, values in posted.lists():
                    scrubbed.setlist(name, [scrub_secrets(value) for value in values])
                scrubbed._mutable = False
                request.POST = scrubbed
        return self.get_response(request)


class RefuseNulMiddleware:
    """A path or query parameter holding a NUL character (``%00``) is refused with 400 before any
    view reads it: no database takes one in text (PostgreSQL refuses it, with an error of the
    server)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            parameters = request.GET.lists()
        except TooManyFieldsSent:
            return _bad_request(
                request, f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} query parameters"
            )
        held = [name for name, values in parameters if "\x00" in name + "".join(values)]
        if "\x00" in request.path:
            held.insert(0, "")
        if held:
            where = f"the query parameter {held[0].replace(chr(0), '')!r}" if held[0] else "the path"
            return _bad_request(request, f"{where} holds a NUL character (%00)")
        return self.get_response(request)


def _bad_request(request, message: str):
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("malformed_request", message), status=400)
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")
