"""``/metrics`` in Prometheus's text format, for a scraper holding ``KINDGI_METRICS_TOKEN``.

Two sources: this process's own metrics (tool-call durations, Python and process figures),
and figures read from the database when scraped (runs by flow, approvals by tenant, time to
decision), the same from every web process. With ``PROMETHEUS_MULTIPROC_DIR`` set, the own
metrics of every process on the machine that shares the directory are summed instead.
"""

import secrets

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

from approvals.metrics import ApprovalsCollector
from audit.metrics import ChainHeadsCollector
from core.addresses import client_address
from core.api.errors import error_body
from core.metrics import process_registry
from runs.metrics import RunsCollector
from tenants.tokens import bearer_token

database_registry = CollectorRegistry()
database_registry.register(RunsCollector())
database_registry.register(ApprovalsCollector())
database_registry.register(ChainHeadsCollector())


LOOPBACK = {"127.0.0.1", "::1"}


def _refusal(request: HttpRequest) -> JsonResponse | None:
    expected = settings.KINDGI_METRICS_TOKEN
    if not expected:
        # The figures name tenants: without a token only `kindgi dev` serves them, to this machine.
        if settings.KINDGI_DEV_SERVER and client_address(request) in LOOPBACK:
            return None
        return JsonResponse(
            error_body(
                "forbidden",
                "metrics are off: set KINDGI_METRICS_TOKEN and scrape with it "
                "(kindgi dev serves them without one, to this machine only)",
            ),
            status=403,
        )
    offered = bearer_token(request.headers.get("Authorization", "")) or ""
    if secrets.compare_digest(offered.encode(), expected.encode()):
        return None
    return JsonResponse(
        error_body("unauthenticated", "send the metrics token: Authorization: Bearer <KINDGI_METRICS_TOKEN>"),
        status=401,
    )


@require_GET
def metrics(request: HttpRequest) -> HttpResponse:
    if (refusal := _refusal(request)) is not None:
        return refusal
    body = generate_latest(process_registry()) + generate_latest(database_registry)
    return HttpResponse(body, content_type=CONTENT_TYPE_LATEST)
