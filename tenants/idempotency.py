"""``Idempotency-Key`` on the API's POSTs that create or decide: a request sent again with the
same key (a client that lost the answer to a network error) gets the first answer, and nothing
is done a second time.

The key is the caller's, kept per user and tenant for ``KEPT`` (a day, then swept). The first
request with a key writes it, in a statement of its own, before doing anything; a second one
with the key finds it: the same request (method, path and body, hashed) waits for the first's
answer and is given it, marked ``Idempotent-Replayed: true``; another request is refused (409).
Only a success is kept: a refusal did nothing, so the key is let go and may be tried again.
"""

import functools
import hashlib
import json
import time
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from core.errors import DomainError
from core.sweeps import Sweep
from tenants.models import IdempotencyKey

HEADER = "Idempotency-Key"
KEPT = timedelta(hours=24)
# How long a request waits for the first one with its key to be answered.
WAIT_SECONDS = 30
# A first request that has not answered in this long died on the way: its key is taken over.
ABANDONED = timedelta(minutes=10)
MOST_CHARACTERS = 255

# For each POST view's schema: the header, described once.
PARAMETER = OpenApiParameter(
    HEADER,
    {"type": "string", "minLength": 1, "maxLength": MOST_CHARACTERS, "pattern": "^[!-~]+$"},
    OpenApiParameter.HEADER,
    required=False,
    description=(
        "Any unique text (a UUID): the same key and body within 24 hours get the first answer "
        "again, and nothing is done twice; another body with the key is 409."
    ),
)


class IdempotencyKeyError(DomainError):
    http_status = 400
    code = "invalid_input"

    def __init__(self, errors: list[str]):
        self.errors = errors
        super().__init__("; ".join(errors))


class IdempotencyConflictError(IdempotencyKeyError):
    http_status = 409
    code = "conflict"


def idempotent(post):
    """A view's POST that honours ``Idempotency-Key``."""

    @functools.wraps(post)
    def answer(view, request, *args, **kwargs):
        key = request.headers.get(HEADER)
        if key is None:
            return post(view, request, *args, **kwargs)
        _check(key)
        held = _take(request, key)
        if isinstance(held, Response):
            return held
        try:
            response = post(view, request, *args, **kwargs)
        except BaseException:
            held.delete()  # nothing was done: the key may be tried again
            raise
        if 200 <= response.status_code < 300:
            held.status_code, held.response = response.status_code, response.data
            held.save(update_fields=["status_code", "response"])
        else:
            held.delete()
        return response

    return answer


def _check(key: str) -> None:
    if not 1 <= len(key) <= MOST_CHARACTERS or not all("!" <= character <= "~" for character in key):
        raise IdempotencyKeyError(
            [f"/{HEADER}: 1 to {MOST_CHARACTERS} visible ASCII characters, no spaces (a UUID, say)"]
        )


def _request_hash(request) -> str:
    body = json.dumps(request.data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()


def _take(request, key: str) -> IdempotencyKey | Response:
    """The key, written for this request to answer; or the first answer with it, to give again."""
    tenant, user, request_hash = request.user.membership.tenant, request.user, _request_hash(request)
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        try:
            with transaction.atomic():
                return IdempotencyKey.objects.create(
                    tenant=tenant, user=user, key=key, request_hash=request_hash
                )
        except IntegrityError:
            pass
        kept = IdempotencyKey.objects.filter(tenant=tenant, user=user, key=key).first()
        if kept is None:
            continue  # let go meanwhile: take it
        now = timezone.now()
        if kept.created_at < now - KEPT or (kept.status_code is None and kept.created_at < now - ABANDONED):
            IdempotencyKey.objects.filter(pk=kept.pk, created_at=kept.created_at).delete()
            continue
        if kept.request_hash != request_hash:
            raise IdempotencyConflictError(
                [
                    f"/{HEADER}: {key!r} was sent with another request in the last 24 hours: use a "
                    "new key for a new request"
                ]
            )
        if kept.status_code is not None:
            return Response(kept.response, status=kept.status_code, headers={"Idempotent-Replayed": "true"})
        if time.monotonic() > deadline:
            raise IdempotencyConflictError(
                [f"/{HEADER}: the first request with {key!r} is still being answered: try again soon"]
            )
        time.sleep(0.05)


def forget_old_keys(*, now=None, limit: int | None = None) -> Sweep:
    """Let go of keys older than a day (``limit`` at a time)."""
    now = now or timezone.now()
    old = list(
        IdempotencyKey.objects.filter(created_at__lt=now - KEPT)
        .order_by("created_at")
        .values_list("pk", flat=True)[:limit]
    )
    IdempotencyKey.objects.filter(pk__in=old).delete()
    sweep = Sweep()
    sweep.done.extend(old)
    return sweep
