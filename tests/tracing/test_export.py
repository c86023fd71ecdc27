"""Spans over OTLP/HTTP to a collector on loopback, and a run's trace carried across processes
by the database: suspended in this process, decided and resumed in another."""

import os
import subprocess
import sys

import pytest
from django.db import connection

from approvals.models import Approval
from core import tracing
from runs.models import RunStatus
from tests.factories import reviewer
from tests.live_server import ROOT, database_env
from tests.runs.helpers import start
from tests.tracing.collector import Collector, attributes_of
from tests.tracing.conftest import named

pytestmark = pytest.mark.django_db(transaction=True)

# Another process, as a reviewer's request or a worker is: Django set up from the environment
# (so traces are configured as in production, by OTEL_EXPORTER_OTLP_ENDPOINT), the approval
# decided there, and the run resumed there with the immediate backend. Its spans are exported
# when it exits.
DECIDE_ELSEWHERE = """
import os, sys
import django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kindgi_site.settings")
django.setup()
from django.contrib.auth import get_user_model
from approvals.actions.decisions import check_complete_approval
from core import tracing
assert tracing.enabled(), "OTEL_EXPORTER_OTLP_ENDPOINT turns traces on"
reviewer = get_user_model().objects.get(username=sys.argv[2])
check_complete_approval(approval_id=sys.argv[1], acting_user=reviewer, decision="approve", rationale="Fine")
"""


def test_spans_go_over_otlp_http_to_a_collector():
    with Collector() as collector:
        provider = tracing.exporting_provider(collector.endpoint, batched=False)
        tracing.install(provider)
        try:
            run = start("acme-ops.status-agent", "Checkout is back to normal.")
        finally:
            tracing.uninstall()
            provider.shutdown()
    assert run.status == RunStatus.SUSPENDED
    assert set(collector.paths) == {"/v1/traces"}
    assert sorted(span.name for span in collector.spans) == [
        "chat packs.acme_ops.post_what_the_user_says",
        "invoke_agent acme-ops.status-agent",
    ]
    assert set(collector.services) == {"kindgi"}
    [agent] = collector.named("invoke_agent acme-ops.status-agent")
    assert attributes_of(agent)["gen_ai.agent.name"] == "acme-ops.status-agent"


def test_a_run_resumed_in_another_process_continues_its_trace(spans):
    decider = reviewer("ada", role="admin")
    run = start("acme-ops.status-agent", "Checkout is back to normal.")
    assert run.status == RunStatus.SUSPENDED
    [first] = named(spans, "invoke_agent acme-ops.status-agent")
    approval = Approval.objects.get(run=run)
    with Collector() as collector:
        environment = (
            os.environ
            | database_env(connection)
            | {
                "OTEL_EXPORTER_OTLP_ENDPOINT": collector.endpoint,
                "OTEL_SERVICE_NAME": "kindgi-decider",
                "KINDGI_PACKS": "packs.my_pack,packs.acme_ops",
                "KINDGI_TASKS": "immediate",
            }
        )
        decided = subprocess.run(
            [sys.executable, "-c", DECIDE_ELSEWHERE, str(approval.pk), decider.username],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            timeout=120,
        )
    assert decided.returncode == 0, decided.stderr.decode()[-3000:]
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    # Only what the other process did, from that process: the wait, the resumed turn, its call.
    assert set(collector.services) == {"kindgi-decider"}
    assert sorted(span.name for span in collector.spans) == [
        "chat packs.acme_ops.post_what_the_user_says",
        "execute_tool acme-ops.post-update",
        "invoke_agent acme-ops.status-agent",
        "kindgi.approval",
    ]
    # One trace id across both processes, carried by the run's row.
    trace_id = first.context.trace_id.to_bytes(16, "big")
    assert {span.trace_id for span in collector.spans} == {trace_id}
    first_id = first.context.span_id.to_bytes(8, "big")
    [resumed] = collector.named("invoke_agent acme-ops.status-agent")
    [waited] = collector.named("kindgi.approval")
    [tool] = collector.named("execute_tool acme-ops.post-update")
    assert resumed.parent_span_id == first_id
    assert waited.parent_span_id == first_id
    assert tool.parent_span_id == resumed.span_id
    assert attributes_of(resumed)["kindgi.run.continued"] is True
    assert attributes_of(waited)["kindgi.approval.reviewer_role"] == "admin"
    assert attributes_of(tool)["gen_ai.tool.call.id"] == "call_post_update"
