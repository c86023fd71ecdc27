"""Traces through OpenTelemetry: exported over OTLP/HTTP when ``OTEL_EXPORTER_OTLP_ENDPOINT``
is set, and off otherwise.

Off costs next to nothing: no SDK is set up, ``tracer()`` is the API's no-op tracer, and the
helpers here answer at once. On, every process that sets Django up (web, workers, the sweeper,
commands) configures the SDK once (``configure``, from ``kindgi_site``'s app ready), and
Django's own request spans come with it.

What the spans say follows the OpenTelemetry GenAI semantic conventions; the spans of a run are
made by the driver (``runs.tracing``), an approval's by the approvals app (``approvals.tracing``).
A run keeps its trace context on its row (``Run.trace_context``, a W3C ``traceparent``), so an
execution in another process, or a decision, continues the run's trace.
"""

import json
import os
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from core.conf import setting

TRACER_NAME = "kindgi"
# The longest text an attribute carries (captured content only): a trace backend is no journal.
CONTENT_LIMIT = 8_192

_PROPAGATOR = TraceContextTextMapPropagator()
# The SDK's provider, once traces are on in this process; None while they are off.
_provider = None
_tracer: trace.Tracer = trace.NoOpTracer()


def configure() -> None:
    """Turn traces on in this process if an OTLP endpoint is set; once, whoever asks again."""
    endpoint = setting("KINDGI_OTEL_ENDPOINT")
    if not endpoint or _provider is not None:
        return
    provider = exporting_provider(endpoint)
    # Global as well, so that any other instrumentation in the process exports with Kindgi's.
    trace.set_tracer_provider(provider)
    install(provider)
    instrument_django(provider)


def exporting_provider(endpoint: str, *, batched: bool = True):
    """An SDK tracer provider that exports to the OTLP/HTTP collector at ``endpoint`` (its
    ``/v1/traces``); headers, timeouts and compression come from the usual ``OTEL_EXPORTER_OTLP_*``
    variables, which the exporter reads itself."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    provider = TracerProvider(
        resource=Resource.create({SERVICE_NAME: os.environ.get("OTEL_SERVICE_NAME", "kindgi")})
    )
    exporter = OTLPSpanExporter(endpoint=f"{endpoint.rstrip('/')}/v1/traces")
    provider.add_span_processor(BatchSpanProcessor(exporter) if batched else SimpleSpanProcessor(exporter))
    return provider


def install(provider) -> None:
    """Make ``provider`` the one Kindgi's spans go to in this process (``configure`` does; a
    test does with an in-memory exporter, and ``uninstall``s it after)."""
    global _provider, _tracer
    _provider, _tracer = provider, provider.get_tracer(TRACER_NAME)


def uninstall() -> None:
    """Traces off again in this process: for tests, which must leave no provider behind."""
    global _provider, _tracer
    _provider, _tracer = None, trace.NoOpTracer()


def instrument_django(provider=None) -> None:
    """Django's request spans (opentelemetry-instrumentation-django, over ASGI too), into
    ``provider`` (by default the one installed). A run started within a request is within the
    request's span; one resumed within a request is linked to it."""
    from opentelemetry.instrumentation.django import DjangoInstrumentor

    provider = provider or _provider

    from opentelemetry import propagate

    # A client's `traceparent` header is not believed: a run started in a request keeps the
    # request's trace, and a header's chosen trace id would put it in someone else's trace,
    # its "not sampled" flag keep it out of every trace. Each request starts a trace of its own.
    propagate.set_global_textmap(_BelieveNoHeader())
    instrumentor = DjangoInstrumentor()
    if not instrumentor.is_instrumented_by_opentelemetry:
        # Health checks and scrapes would be most of the traces, and say nothing.
        instrumentor.instrument(
            tracer_provider=provider,
            excluded_urls="/metrics,/healthz,/static/",
            request_hook=_without_queries,
        )


class _BelieveNoHeader(TextMapPropagator):
    """Reads no trace context from a request, and writes none into one."""

    def extract(self, carrier, context: Context | None = None, getter=None) -> Context:
        return context if context is not None else Context()

    def inject(self, carrier, context: Context | None = None, setter=None) -> None:
        pass

    @property
    def fields(self) -> set[str]:
        return set()


def _without_queries(span: trace.Span, request) -> None:
    """A request's span without its query string: one can carry what is no trace's to keep (an
    OAuth callback's code and state)."""
    attributes = getattr(span, "attributes", None) or {}
    for name in ("http.url", "http.target", "url.full"):
        value = attributes.get(name)
        if isinstance(value, str) and "?" in value:
            span.set_attribute(name, value.partition("?")[0])
    if attributes.get("url.query"):
        span.set_attribute("url.query", "")


def uninstrument_django() -> None:
    from opentelemetry import propagate
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.propagators.composite import CompositePropagator

    DjangoInstrumentor().uninstrument()
    propagate.set_global_textmap(CompositePropagator([TraceContextTextMapPropagator()]))


def enabled() -> bool:
    return _provider is not None


def tracer() -> trace.Tracer:
    """Kindgi's tracer: the SDK's when traces are on, else the no-op one."""
    return _tracer


def capture_content() -> bool:
    """Whether spans carry what was said and done (messages, tool arguments and results, a
    reviewer's rationale): only when ``KINDGI_OTEL_CAPTURE_CONTENT`` opts in."""
    return bool(setting("KINDGI_OTEL_CAPTURE_CONTENT"))


def traceparent_here() -> str:
    """The W3C ``traceparent`` of the span current here, or "" (no span, or traces off): what
    a run made here keeps, so that its spans join the trace that made it (a request's, or its
    parent run's step)."""
    if _provider is None:
        return ""
    if not trace.get_current_span().get_span_context().is_valid:
        return ""
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier)
    return carrier.get("traceparent", "")


def traceparent_of(span: trace.Span) -> str:
    carrier: dict[str, str] = {}
    _PROPAGATOR.inject(carrier, context=trace.set_span_in_context(span))
    return carrier.get("traceparent", "")


def context_of(traceparent: str) -> Context | None:
    """The context a kept ``traceparent`` names, for spans to continue its trace; None if empty
    or not a traceparent."""
    if not traceparent:
        return None
    context = _PROPAGATOR.extract({"traceparent": traceparent})
    if not trace.get_current_span(context).get_span_context().is_valid:
        return None
    return context


def links_here(parent: Context | None) -> list[trace.Link]:
    """A link to the span current here (the request that decided, or resumed, a run) when the
    spans about to be made continue another trace: the two traces lead to each other."""
    here = trace.get_current_span().get_span_context()
    if not here.is_valid:
        return []
    if parent is not None and trace.get_current_span(parent).get_span_context().trace_id == here.trace_id:
        return []
    return [trace.Link(here)]


def nanoseconds(moment: datetime) -> int:
    return int(moment.timestamp() * 1_000_000_000)


def content(value: Any) -> str:
    """``value`` as an attribute's text: JSON, cut to ``CONTENT_LIMIT``."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text[:CONTENT_LIMIT]


def set_attributes(span: trace.Span, attributes: Mapping[str, Any]) -> None:
    """Set those that have a value (OpenTelemetry refuses None); a text choice as plain text."""
    span.set_attributes(
        {
            name: str(value) if isinstance(value, str) else value
            for name, value in attributes.items()
            if value not in (None, "")
        }
    )
