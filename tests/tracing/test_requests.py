"""Django's request spans (opentelemetry-instrumentation-django), and a run's trace within them."""

import pytest

from core import tracing
from tests.api.conftest import client_for
from tests.factories import reviewer
from tests.tracing.conftest import named, one

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def requests_traced(spans):
    """Django instrumented into the test's provider, and not after: its middleware leaves the
    settings again."""
    tracing.instrument_django()
    yield spans
    tracing.uninstrument_django()


def test_a_run_started_by_a_request_is_within_its_trace_and_the_decision_links_to_it(requests_traced):
    spans = requests_traced
    api = client_for(reviewer("ada"))
    started = api.post(
        "/api/v1/runs",
        {"agentId": "acme-ops.status-agent", "input": {"userMessage": "Checkout is back to normal."}},
        format="json",
    ).json()
    assert started["status"] == "suspended"
    [starting] = [
        span for span in spans.get_finished_spans() if span.attributes.get("http.route") == "api/v1/runs"
    ]
    first = one(spans, "invoke_agent acme-ops.status-agent")
    assert starting.kind.name == "SERVER"
    assert first.parent.span_id == starting.context.span_id  # made within the request's span
    assert first.context.trace_id == starting.context.trace_id

    spans.clear()
    approval_id = api.get("/api/v1/approvals?status=pending").json()["items"][0]["id"]
    api.post(
        f"/api/v1/approvals/{approval_id}/complete", {"decision": "approve", "rationale": "ok"}, format="json"
    )
    [deciding] = [
        span for span in spans.get_finished_spans() if "complete" in str(span.attributes.get("http.route"))
    ]
    resumed = one(spans, "invoke_agent acme-ops.status-agent")
    waited = one(spans, "kindgi.approval")
    # The run's trace goes on, the request's is its own; each leads to the other.
    for span in (resumed, waited):
        assert span.context.trace_id == first.context.trace_id
        assert span.parent.span_id == starting.context.span_id
        assert [link.context.span_id for link in span.links] == [deciding.context.span_id]
    assert deciding.context.trace_id != first.context.trace_id
    assert named(spans, "execute_tool acme-ops.post-update")


def test_a_clients_traceparent_and_a_query_string_stay_out_of_the_trace(requests_traced):
    """A header's trace id would put the run in a trace its sender chose, and its "not sampled"
    flag keep the run out of every trace; a query string can carry an OAuth code."""
    spans = requests_traced
    chosen_trace = "0af7651916cd43dd8448eb211c80319c"
    api = client_for(reviewer("ada"))
    started = api.post(
        "/api/v1/runs?code=a-secret-code&state=s",
        {"agentId": "acme-ops.status-agent", "input": {"userMessage": "Checkout is back to normal."}},
        format="json",
        HTTP_TRACEPARENT=f"00-{chosen_trace}-b7ad6b7169203331-00",
    ).json()
    assert started["status"] == "suspended"
    first = one(spans, "invoke_agent acme-ops.status-agent")
    assert first.context.trace_flags.sampled
    assert format(first.context.trace_id, "032x") != chosen_trace
    [starting] = [
        span for span in spans.get_finished_spans() if span.attributes.get("http.route") == "api/v1/runs"
    ]
    assert "a-secret-code" not in str(dict(starting.attributes))
