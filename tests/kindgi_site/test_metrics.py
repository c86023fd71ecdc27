"""/metrics: who may read it, and that its figures are the database's and the process's own."""

import pytest
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from approvals.models import Approval
from runs.models import Run
from tests.factories import default_tenant, other_tenant, principal
from tests.pack_fixtures.probes import SCRIPT
from tests.runs.conftest import probe_packs  # noqa: F401  (the sample and probe packs)
from tests.runs.decide import decide
from tests.runs.helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)
TOKEN = "a-metrics-token-for-tests"
AUTHORIZED = {"HTTP_AUTHORIZATION": f"Bearer {TOKEN}"}


def scrape(client) -> dict[tuple[str, tuple], float]:
    """Every sample as {(name, sorted labels): value}."""
    with override_settings(KINDGI_METRICS_TOKEN=TOKEN):
        response = client.get("/metrics", **AUTHORIZED)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }


class TestWhoMayRead:
    def test_without_the_token_it_is_refused(self, client):
        with override_settings(KINDGI_METRICS_TOKEN=TOKEN):
            response = client.get("/metrics")
        assert response.status_code == 401
        assert response.json()["error"]["message"] == (
            "send the metrics token: Authorization: Bearer <KINDGI_METRICS_TOKEN>"
        )

    def test_a_wrong_token_is_refused(self, client):
        with override_settings(KINDGI_METRICS_TOKEN=TOKEN):
            response = client.get("/metrics", HTTP_AUTHORIZATION="Bearer not-the-token")
        assert response.status_code == 401

    def test_an_api_token_is_not_the_metrics_token(self, client):
        from tenants.tokens import do_create_token
        from tests.factories import member

        api_token = do_create_token(user=member("mia"))[1]
        with override_settings(KINDGI_METRICS_TOKEN=TOKEN):
            response = client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {api_token}")
        assert response.status_code == 401

    def test_with_no_token_set_a_production_site_serves_none(self, client):
        with override_settings(KINDGI_METRICS_TOKEN="", DEBUG=False):
            response = client.get("/metrics")
        assert response.status_code == 403
        assert "set KINDGI_METRICS_TOKEN" in response.json()["error"]["message"]

    def test_with_no_token_set_only_kindgi_dev_serves_them_and_only_to_this_machine(self, client):
        with override_settings(KINDGI_METRICS_TOKEN="", DEBUG=True, KINDGI_DEV_SERVER=False):
            assert client.get("/metrics").status_code == 403  # a DEBUG site is not kindgi dev
        with override_settings(KINDGI_METRICS_TOKEN="", DEBUG=True, KINDGI_DEV_SERVER=True):
            assert client.get("/metrics", REMOTE_ADDR="127.0.0.1").status_code == 200
            assert client.get("/metrics", REMOTE_ADDR="::1").status_code == 200
            refused = client.get("/metrics", REMOTE_ADDR="192.168.1.20")
        assert refused.status_code == 403
        assert "to this machine only" in refused.json()["error"]["message"]

    def test_only_get(self, client):
        with override_settings(KINDGI_METRICS_TOKEN=TOKEN):
            response = client.post("/metrics", **AUTHORIZED)
        assert response.status_code == 405


def test_runs_are_counted_by_flow_and_agent(client):
    SCRIPT.replies += [answer("hello")]
    start("probe.free")
    SCRIPT.replies += [RuntimeError("the model broke")]
    start("probe.free")
    start("acme-ops.status-agent", "Checkout is fine.")  # suspends on its approval
    samples = scrape(client)
    free = (("agent", "probe.free"), ("flow", "agent.turn"))
    status = (("agent", "acme-ops.status-agent"), ("flow", "agent.turn"))
    assert samples[("kindgi_runs_started_total", free)] == 2
    assert samples[("kindgi_runs_completed_total", free)] == 1
    assert samples[("kindgi_runs_failed_total", free)] == 1
    assert samples[("kindgi_runs_started_total", status)] == 1
    assert ("kindgi_runs_completed_total", status) not in samples
    assert samples[("kindgi_runs_active", (("status", "suspended"),))] == 1
    assert samples[("kindgi_runs_active", (("status", "running"),))] == 0


def test_pending_approvals_are_counted_by_tenant(client):
    start("acme-ops.status-agent", "One.")
    start("acme-ops.status-agent", "Two.")
    from runs.actions import check_start_run

    check_start_run(
        tenant=other_tenant(),
        principal=principal(other_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Elsewhere."},
    )
    samples = scrape(client)
    assert samples[("kindgi_approvals_pending", (("tenant", default_tenant().slug),))] == 2
    assert samples[("kindgi_approvals_pending", (("tenant", other_tenant().slug),))] == 1


def test_time_to_decision_is_a_histogram_of_the_decisions(client):
    from datetime import timedelta

    approved = start("acme-ops.status-agent", "One.")
    rejected = start("acme-ops.status-agent", "Two.")
    # Approvals made 10 s and 2 h before their decisions.
    Approval.objects.filter(run=approved).update(created_at=Run.objects.get(pk=approved.pk).created_at)
    decide(approved, "call_post_update", "approve")
    decide(rejected, "call_post_update", "reject", "not now")
    approval = Approval.objects.get(run=approved)
    Approval.objects.filter(pk=approval.pk).update(created_at=approval.decided_at - timedelta(seconds=10))
    other = Approval.objects.get(run=rejected)
    Approval.objects.filter(pk=other.pk).update(created_at=other.decided_at - timedelta(hours=2))
    samples = scrape(client)

    def bucket(outcome: str, bound: str) -> float:
        return samples[
            ("kindgi_approval_time_to_decision_seconds_bucket", (("le", bound), ("outcome", outcome)))
        ]

    assert (bucket("approve", "5.0"), bucket("approve", "15.0"), bucket("approve", "+Inf")) == (0, 1, 1)
    assert (bucket("reject", "3600.0"), bucket("reject", "14400.0"), bucket("reject", "+Inf")) == (0, 1, 1)
    assert samples[("kindgi_approval_time_to_decision_seconds_count", (("outcome", "approve"),))] == 1
    assert samples[
        ("kindgi_approval_time_to_decision_seconds_sum", (("outcome", "approve"),))
    ] == pytest.approx(10, abs=0.01)
    assert samples[
        ("kindgi_approval_time_to_decision_seconds_sum", (("outcome", "reject"),))
    ] == pytest.approx(7200, abs=0.01)


def test_tool_calls_are_timed_in_the_process_that_ran_them(client):
    def calls_of(samples, outcome: str, tool: str = "probe.read") -> float:
        labels = (("outcome", outcome), ("tool", tool))
        return samples.get(("kindgi_tool_call_duration_seconds_count", labels), 0)

    before = scrape(client)
    SCRIPT.replies += [
        calls(("c1", "probe.read", {"label": "a", "pause_ms": 60}), ("c2", "probe.read", {"label": "b"})),
        calls(("c3", "probe.explode", {})),
        answer(),
    ]
    start("probe.free")
    after = scrape(client)
    assert calls_of(after, "completed") - calls_of(before, "completed") == 2
    assert calls_of(after, "failed", "probe.explode") - calls_of(before, "failed", "probe.explode") == 1
    slow_bucket = (("le", "0.05"), ("outcome", "completed"), ("tool", "probe.read"))
    # The 60 ms call is above the 50 ms bound, the other (30 ms) under it.
    assert (
        after[("kindgi_tool_call_duration_seconds_bucket", slow_bucket)]
        - before.get(("kindgi_tool_call_duration_seconds_bucket", slow_bucket), 0)
        == 1
    )


def test_the_queries_do_not_grow_with_runs_or_approvals(client, django_assert_max_num_queries):
    for number in range(12):
        start("acme-ops.status-agent", f"Message {number}.")
    for run in Run.objects.all()[:6]:
        decide(run, "call_post_update", "approve")
    # Runs by flow, approvals pending and time to decision, the chains' heads: one read each.
    with override_settings(KINDGI_METRICS_TOKEN=TOKEN), django_assert_max_num_queries(4):
        assert client.get("/metrics", **AUTHORIZED).status_code == 200
