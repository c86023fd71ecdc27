import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from core import tracing


@pytest.fixture
def spans():
    """Traces on in this process, into memory, for this test only: no global provider is set,
    and Kindgi's tracer is the no-op one again after."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.install(provider)
    yield exporter
    tracing.uninstall()
    provider.shutdown()


@pytest.fixture
def content_captured(settings):
    settings.KINDGI_OTEL_CAPTURE_CONTENT = True


def named(exporter, name: str) -> list:
    return [span for span in exporter.get_finished_spans() if span.name == name]


def one(exporter, name: str):
    [span] = named(exporter, name)
    return span
