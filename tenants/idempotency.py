"""``Idempotency-Key`` on the API's POSTs that create or decide: a request sent again with the
same key (a client that lost the answer to a network error) gets the first answer, and nothing
is done a second time.

The key is the caller's, kept per user and tenant for ``KEPT`` (a day, then swept). The first
request with a key writes it, in a statement of its own, before doing anything; a second one
with the key finds it: the same request (method, path, body and credential, hashed) waits for
the first's answer and is given it, marked ``Idempotent-Replayed: true``; another request is
refused (409), as is the same one when the first has not answered within ``WAIT_SECONDS``.
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


class IdempotencyKeyInUseError(IdempotencyConflictError):
    """The first request with the key has not answered yet: the same request, sent again later,
    gets its answer (``kindgi.Client`` does so by itself)."""

    code = "idempotency_key_in_use"


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
            _let_go(held)  # refused: nothing was done, and the key may be tried again
            raise
        if 200 <= response.status_code < 300:
            IdempotencyKey.objects.filter(pk=held.pk).update(
                status_code=response.status_code, response=response.data
            )
        else:
            _let_go(held)
        return response

    return answer


def _let_go(held: IdempotencyKey) -> None:
    IdempotencyKey.objects.filter(pk=held.pk, status_code__isnull=True).delete()


def _check(key: str) -> None:
    if not 1 <= len(key) <= MOST_CHARACTERS or not all("!" <= character <= "~" for character in key):
        raise IdempotencyKeyError(
            [f"/{HEADER}: 1 to {MOST_CHARACTERS} visible ASCII characters, no spaces (a UUID, say)"]
        )


def _request_hash(request) -> str:
    """The request as the key stands for it: its method, path and body, and the credential it
    came with. Two tokens of one account may stand for different people (a service account's
    for each person it runs for): one's answer is never the other's."""
    credential = f"token {request.auth.pk}" if getattr(request.auth, "pk", None) else "session"
    body = json.dumps(request.data, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(f"{request.method} {request.path} {credential}\n{body}".encode()).hexdigest()


def _take(request, key: str) -> IdempotencyKey | Response:
    """The key, written for this request to answer; or the first answer with it, to give again.

    A key whose first request has not answered is never taken over, however long it takes (a
    run may execute within the request): the second waits ``WAIT_SECONDS`` for the answer, then
    is told to try again. A first request that died leaves its key unanswered for the day."""
    tenant, user, request_hash = request.user.membership.tenant, request.user, _request_hash(request)
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        kept = IdempotencyKey.objects.filter(tenant=tenant, user=user, key=key).first()
        if kept is not None and kept.created_at < timezone.now() - KEPT:
            IdempotencyKey.objects.filter(pk=kept.pk, created_at=kept.created_at).delete()  # forgotten
            kept = None
        if kept is None:
            try:
                with transaction.atomic():
                    return IdempotencyKey.objects.create(
                        tenant=tenant, user=user, key=key, request_hash=request_hash
                    )
            except IntegrityError:
                continue  # another request took it first: read what it left
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
            raise IdempotencyKeyInUseError(
                [
                    f"/{HEADER}: the first request with {key!r} is still being answered: send it "
                    "again later to get its answer"
                ]
            )
        time.sleep(0.05)  # reading only, while the first request answers


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
