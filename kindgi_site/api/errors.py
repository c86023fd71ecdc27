"""One place that turns every error into ``{"error": {"code", "message", "details"}}``."""

from django.http import Http404, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler

from approvals.exceptions import (
    ApprovalConflictError,
    ApprovalInputError,
    ApprovalNotFoundError,
    DecisionForbiddenError,
    NotAReviewerError,
)
from core.api.errors import error_body, field_details
from core.api.parsers import RequestTooLarge
from runs.exceptions import RunInputError, RunNotFoundError, RunStateError, UnknownDefinitionError
from tenants.exceptions import NotAMemberError

# Domain errors → (HTTP status, code). Each carries a message written for the person reading it.
DOMAIN_ERRORS = [
    (RunInputError, status.HTTP_400_BAD_REQUEST, "invalid_input"),
    (ApprovalInputError, status.HTTP_400_BAD_REQUEST, "invalid_input"),
    (UnknownDefinitionError, status.HTTP_404_NOT_FOUND, "unknown_definition"),
    (ApprovalNotFoundError, status.HTTP_404_NOT_FOUND, "not_found"),
    (RunNotFoundError, status.HTTP_404_NOT_FOUND, "not_found"),
    (NotAMemberError, status.HTTP_403_FORBIDDEN, "no_tenant"),
    (NotAReviewerError, status.HTTP_403_FORBIDDEN, "not_a_reviewer"),
    (DecisionForbiddenError, status.HTTP_403_FORBIDDEN, "forbidden"),
    (RunStateError, status.HTTP_409_CONFLICT, "conflict"),
    (ApprovalConflictError, status.HTTP_409_CONFLICT, "conflict"),
]

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
    for error_class, http_status, code in DOMAIN_ERRORS:
        if isinstance(exc, error_class):
            errors = getattr(exc, "errors", None)
            details = field_details(errors) if errors else {}
            message = str(exc) if not errors else "; ".join(errors)
            return Response(error_body(code, message, details), status=http_status)
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
    """A path under /api/v1/ that names no endpoint: the same error shape as every other."""
    return JsonResponse(error_body("not_found", f"there is no API endpoint {request.path}"), status=404)
