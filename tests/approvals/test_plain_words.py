"""Plain words: every surface a person reads leads with the call in a sentence (its tool's
summary) and says why it asks in words; the seeds' title and the record's reason stay."""

import pytest
from django.test import Client

from approvals.actions.rules import check_save_rule
from approvals.models import Approval
from approvals.words import why_it_asks
from runs.actions import check_start_run
from tests.api.conftest import client_for
from tests.factories import default_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)

SAID = 'Post "Checkout is back." to the public status page'


def status_run():
    return check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Checkout is back."},
    )


def test_the_api_gives_the_summary_and_why_beside_the_seeds_title_and_reason():
    approval = status_run().approvals.get()
    shown = client_for(reviewer("ada")).get(f"/api/v1/approvals/{approval.pk}").json()
    assert shown["title"] == "HITL review: acme-ops.post-update"
    assert shown["summary"] == SAID
    assert shown["reason"] == "override always_ask (agent code)"
    assert shown["why"] == "This agent's code asks before every call of this tool"
    tool = client_for(reviewer("bo")).get("/api/v1/tools/acme-ops.post-update").json()
    assert tool["summary"] == 'Post "{message}" to the public status page'


def test_the_console_leads_with_the_summary_and_keeps_the_tool_id_smaller():
    approval = status_run().approvals.get()
    client = Client()
    client.force_login(reviewer("ada"))
    page = client.get(f"/console/approvals/{approval.pk}/").text
    assert (
        '<h1 id="approval-summary">Post &quot;Checkout is back.&quot; to the public status page</h1>' in page
    )
    assert "This agent&#x27;s code asks before every call of this tool" in page
    assert '<small class="raw-reason">override always_ask (agent code)</small>' in page
    queue = client.get("/console/queue/").text
    assert queue.index("Post &quot;Checkout is back.&quot;") < queue.index(
        "<code>acme-ops.post-update</code>"
    )


def test_a_rules_reason_and_a_budget_read_as_sentences():
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "status posts",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "budget": {"scope": "tenant", "maxCalls": 5},
        },
        acting_user=None,
        surface="system",
    )
    approval = Approval.objects.get(run=status_run())
    assert approval.why == (
        "This agent's code asks before every call of this tool; rule “status posts” asks every time; "
        "within its budget: 0 of 5 calls in this tenant"
    )
    assert why_it_asks(
        'rule "payments" (never_ask); over budget: 99,999 of 100,000 used in this run; this call 99,999'
    ) == (
        "Rule “payments” lets it run within its budget; it would go over its budget: 99,999 of 100,000 "
        "used in this run, and this call adds 99,999"
    )
