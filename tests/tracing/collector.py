"""An OTLP/HTTP trace collector on 127.0.0.1: it decodes each export (protobuf) as a collector
would, and keeps the spans with the service that sent them."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class Collector:
    def __init__(self):
        self.paths: list[str] = []
        self.spans: list = []  # opentelemetry.proto.trace.v1.trace_pb2.Span, as received
        self.services: list[str] = []  # the service.name each span came from
        collector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # the standard library's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                export = ExportTraceServiceRequest()
                export.ParseFromString(body)
                collector.paths.append(self.path)
                for resource_spans in export.resource_spans:
                    attributes = {a.key: a.value.string_value for a in resource_spans.resource.attributes}
                    for scope_spans in resource_spans.scope_spans:
                        for span in scope_spans.spans:
                            collector.spans.append(span)
                            collector.services.append(attributes.get("service.name", ""))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        """What OTEL_EXPORTER_OTLP_ENDPOINT says: the exporter adds /v1/traces."""
        return f"http://127.0.0.1:{self._httpd.server_port}"

    def named(self, name: str) -> list:
        return [span for span in self.spans if span.name == name]

    def __enter__(self) -> "Collector":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def attributes_of(span) -> dict:
    """A received span's attributes, each as the value it holds."""
    return {a.key: getattr(a.value, a.value.WhichOneof("value")) for a in span.attributes}
