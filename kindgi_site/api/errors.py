"""One place that turns every error into ``{"error": {"code", "message", "details"}}``: the
apps' own (each says its status and code) and DRF's."""

import json

from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler

from core.api.errors import domain_error, error_body, field_details
from core.api.parsers import RequestTooLarge
from core.errors import DomainError
from core.secrets import scrub_text

DRF_CODES = {
    exceptions.NotAuthenticated: "unauthenticated",
    exceptions.AuthenticationFailed: "unauthenticated",
    exceptions.PermissionDenied: "forbidden",
    exceptions.NotFound: "not_found",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.ParseError: "malformed_request",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.Throttled: "throttled",
    RequestTooLarge: "too_large",
    exceptions.ValidationError: "invalid_input",
}


def _field_errors(detail, path: str = "") -> list[str]:
    """DRF's nested error detail as ``/field/…: message`` lines; an error about an object as a
    whole (DRF's ``non_field_errors``) is about its path itself."""
    if isinstance(detail, dict):
        return [
            line
            for key, value in detail.items()
            for line in _field_errors(
                value, path if key == api_settings.NON_FIELD_ERRORS_KEY else f"{path}/{key}"
            )
        ]
    if isinstance(detail, list):
        if all(not isinstance(item, dict | list) for item in detail):
            return [f"{path or '/'}: {item}" for item in detail]
        return [line for index, item in enumerate(detail) for line in _field_errors(item, f"{path}/{index}")]
    return [f"{path or '/'}: {detail}"]


def api_exception_handler(exc, context):
    response = _error_response(exc, context)
    if response is not None:
        # An error may echo what was asked (a path, a name): never a secret that came with it.
        response.data = json.loads(scrub_text(json.dumps(response.data)))
    return response


def _error_response(exc, context):
    if isinstance(exc, DomainError):  # each app's errors say what they are on the wire
        http_status, body = domain_error(exc)
        return Response(body, status=http_status)
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(f"there is no such resource at {context['request'].path}")
    response = exception_handler(exc, context)
    if response is None:
        return None
    code = next((c for cls, c in DRF_CODES.items() if isinstance(exc, cls)), "error")
    if isinstance(exc, exceptions.ValidationError):
        errors = _field_errors(exc.detail)
        body = error_body(code, "; ".join(errors), field_details(errors))
    else:
        body = error_body(code, str(exc.detail))
    response.data = body
    return response


@csrf_exempt  # a bearer-token client has no CSRF cookie; it should still hear "not found"
def endpoint_not_found(request, path: str = "") -> JsonResponse:
    """A path under /api/ that names no endpoint: the same error shape as every other."""
    return JsonResponse(
        error_body("not_found", scrub_text(f"there is no API endpoint {request.path}")), status=404
    )
