"""The insight page: time to decision, by tool and agent, rates and long waits, in few queries."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from approvals.insight import decision_insight
from approvals.models import Approval, Decision
from runs.actions import check_start_run
from tests.factories import default_tenant, member, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db


def recorded(
    count: int,
    *,
    took=timedelta(minutes=3),
    status="approved",
    edited=False,
    tool="acme-ops.post-update",
    agent="acme-ops.status-agent",
    tenant=None,
    age=timedelta(hours=2),
) -> list[Approval]:
    """``count`` approvals asked ``age`` ago and ended ``took`` later (pending: not ended)."""
    tenant = tenant or default_tenant()
    run = check_start_run(
        tenant=tenant,
        principal=principal(tenant),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "seed"},
    )
    now = timezone.now()
    start = Approval.objects.count()
    approvals = Approval.objects.bulk_create(
        Approval(
            tenant=tenant,
            run=run,
            call_id=f"seed-{start + index}",
            tool_key=tool,
            tool_version="0.1.0",
            agent_key=agent,
            arguments={"n": index},
            digest="sha256:seed",
            required_role="standard",
            status=status,
            gate={"gate": "ask", "reason": "seeded"},
            decided_at=None if status == "pending" else now - age + took,
        )
        for index in range(count)
    )
    Approval.objects.filter(pk__in=[a.pk for a in approvals]).update(created_at=now - age)
    if status in ("approved", "rejected"):
        sequence = Decision.objects.filter(tenant=tenant).count()
        decisions = Decision.objects.bulk_create(
            Decision(
                approval=a,
                tenant=tenant,
                sequence=sequence + index + 1,
                previous_hash="-",
                hash="-",
                decision="approve" if status == "approved" else "reject",
                reviewer_name="Ada",
                arguments={"n": -1} if edited else None,
                decided_at=now - age + took,
            )
            for index, a in enumerate(approvals)
        )
        for decision in decisions:  # each settles its approval
            Approval.objects.filter(pk=decision.approval_id).update(decision=decision)
    return approvals


def test_time_to_decision_rates_and_long_waits_are_counted_from_the_tenants_approvals():
    recorded(6, took=timedelta(seconds=30))
    recorded(3, took=timedelta(minutes=10), edited=True)
    recorded(
        1,
        took=timedelta(hours=5),
        status="rejected",
        tool="acme-ops.delete",
        agent="acme-ops.cleaner",
        age=timedelta(hours=6),
    )
    recorded(2, status="expired", took=timedelta(hours=2), age=timedelta(hours=3))
    recorded(4, took=timedelta(seconds=1), tenant=other_tenant())  # not Acme's: not counted
    recorded(2, status="pending", age=timedelta(days=2))
    insight = decision_insight(default_tenant(), days=30, now=timezone.now())
    # 10 decided by a person (6 × 30 s, 3 × 10 min, 1 × 5 h).
    assert insight.decided == 10
    assert insight.median == timedelta(seconds=30)  # the 5th of 10
    assert insight.p90 == timedelta(minutes=10)  # the 9th of 10
    assert dict(insight.buckets) == {
        "under 1 min": 6,
        "1–5 min": 0,
        "5–15 min": 3,
        "15–60 min": 0,
        "1–4 h": 0,
        "4–24 h": 1,
        "over 1 day": 0,
    }
    assert (insight.approved, insight.rejected, insight.edited) == (9, 1, 3)
    assert (insight.reject_rate, insight.edit_rate) == (0.1, 3 / 9)
    # Past an hour: the 5 h decision, the two expired after 2 h, the two waiting for 2 days.
    assert (insight.waited_past_hour, insight.waited_past_day) == (5, 2)
    tools = {row.name: row for row in insight.by_tool}
    assert (tools["acme-ops.post-update"].total, tools["acme-ops.post-update"].expired) == (9 + 2 + 2, 2)
    assert (tools["acme-ops.delete"].rejected, tools["acme-ops.delete"].reject_rate) == (1, 1.0)
    assert {row.name for row in insight.by_agent} == {"acme-ops.status-agent", "acme-ops.cleaner"}
    assert sorted(a.arguments["n"] for a in insight.oldest_waiting) == [0, 1]


def test_a_window_leaves_out_what_was_asked_before_it():
    recorded(2, age=timedelta(days=10))
    recorded(1, age=timedelta(days=2), took=timedelta(days=1, hours=1))
    week = decision_insight(default_tenant(), days=7, now=timezone.now())
    assert week.decided == 1
    assert week.waited_past_day == 1
    assert decision_insight(default_tenant(), days=30, now=timezone.now()).decided == 3


@pytest.mark.parametrize("rows", [10, 1000])
def test_the_insight_page_keeps_its_queries_as_approvals_grow(client, rows, django_assert_num_queries):
    client.force_login(reviewer("ada"))
    recorded(rows // 2)
    recorded(rows - rows // 2, status="rejected", tool=f"acme-ops.tool-{rows}", edited=False)
    with django_assert_num_queries(QUERIES):
        page = client.get(reverse("console:insight"))
    assert page.status_code == 200
    assert f"acme-ops.tool-{rows}" in page.text
    assert 'id="distribution"' in page.text


# Signing in (session, user, membership, reviewer, tenant); figures; median; p90; by tool; by agent; oldest.
QUERIES = 11


def test_the_insight_page_is_for_the_tenants_reviewers(client):
    client.force_login(member("sid"))
    assert client.get(reverse("console:insight")).status_code == 403
    client.force_login(reviewer("ada", tenant=other_tenant()))
    recorded(3)
    page = client.get(reverse("console:insight") + "?days=7")
    assert page.status_code == 200
    assert "acme-ops.post-update" not in page.text  # Acme's, not Globex's
    assert client.get(reverse("console:insight") + "?days=banana").status_code == 200  # the default window
