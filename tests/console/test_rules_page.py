"""The console's rules page: the rules, a draft tried against recorded calls, and saving it."""

import pytest
from django.urls import reverse

from approvals.models import ApprovalRule
from runs.actions import check_start_run
from runs.models import JournalEntry
from tests.factories import default_tenant, member, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db
DRAFT = {
    "name": "ask for notes",
    "enabled": "on",
    "tool_pattern": "my-pack.add-order-note",
    "agent_pattern": "*",
    "gate": "always_ask",
    "days": "30",
}


def recorded_notes(count: int, *, start: int = 0):
    """``count`` calls of my-pack.add-order-note that ran with no gate asking, as a flow step."""
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.note-order",
        input={"orderId": "ord_1001", "text": "x"},
    )
    JournalEntry.objects.bulk_create(
        JournalEntry(
            run=run,
            sequence=1000 + index,
            kind="tool.called",
            node_id="write",
            payload={
                "callId": f"c{start + index}",
                "toolId": "my-pack.add-order-note",
                "toolVersion": "0.1.0",
                "arguments": {"orderId": "ord_1001", "text": f"note {start + index}"},
                "gate": {"gate": "run", "reason": "no gate: a flow step that no rule matches"},
            },
        )
        for index in range(count)
    )


def recorded_posts(count: int):
    """``count`` calls of acme-ops.post-update by the status agent that its code's gate asked about."""
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "x"},
    )
    JournalEntry.objects.bulk_create(
        JournalEntry(
            run=run,
            sequence=1000 + index,
            kind="tool.called",
            payload={
                "callId": f"p{index}",
                "toolId": "acme-ops.post-update",
                "toolVersion": "0.1.0",
                "arguments": {"message": f"post {index}"},
                "gate": {"gate": "ask", "reason": "override always_ask (agent code)"},
            },
        )
        for index in range(count)
    )


def test_a_reviewer_tries_a_draft_and_sees_what_it_would_have_done_but_cannot_save(client):
    client.force_login(reviewer("ada"))
    recorded_notes(3)
    page = client.get(reverse("console:rules"), DRAFT)
    assert page.status_code == 200
    assert '<strong id="changed">3 would go another way</strong>' in page.text
    assert "note 2" in page.text  # the changed calls, with their arguments
    assert "rule &quot;ask for notes&quot; (always_ask)" in page.text
    assert 'id="save"' not in page.text
    refused = client.post(reverse("console:rules"), DRAFT, follow=True)
    assert "Only a tenant admin can save rules" in refused.text
    assert not ApprovalRule.objects.exists()


def test_a_tenant_admin_saves_the_draft_through_the_one_action_that_writes_rules(client):
    client.force_login(member("tia", tenant_admin=True))
    recorded_notes(1)
    tried = client.get(reverse("console:rules"), DRAFT)
    assert 'id="save"' in tried.text
    saved = client.post(reverse("console:rules"), DRAFT, follow=True)
    assert "Saved the rule &quot;ask for notes&quot;." in saved.text
    rule = ApprovalRule.objects.get()
    assert (rule.tenant, rule.gate, rule.tool_pattern, rule.enabled) == (
        default_tenant(),
        "always_ask",
        DRAFT["tool_pattern"],
        True,
    )
    # An edit of it: the form starts from the rule, and saving changes that rule, not a new one.
    editing = client.get(reverse("console:rules"), {"edit": rule.pk})
    assert f'name="rule" value="{rule.pk}"' in editing.text
    client.post(reverse("console:rules"), DRAFT | {"rule": rule.pk, "gate": "deny", "enabled": ""})
    rule.refresh_from_db()
    assert (ApprovalRule.objects.count(), rule.gate, rule.enabled) == (1, "deny", False)


def test_a_bad_draft_names_what_is_wrong_and_saves_nothing(client):
    client.force_login(member("tia", tenant_admin=True))
    bad = client.get(reverse("console:rules"), DRAFT | {"condition": "amount > 1", "gate": "maybe"})
    assert bad.status_code == 400
    assert "is not a condition" in bad.text
    assert "Select a valid choice" in bad.text
    posted = client.post(reverse("console:rules"), DRAFT | {"condition": "amount > 1"})
    assert posted.status_code == 400
    stranger = ApprovalRule.objects.create(tenant=other_tenant(), name="globex", gate="deny")
    assert client.get(reverse("console:rules"), DRAFT | {"rule": stranger.pk}).status_code == 400
    assert ApprovalRule.objects.count() == 1  # Globex's own, untouched
    assert "globex" not in client.get(reverse("console:rules")).text


def test_the_rules_page_is_for_reviewers_and_tenant_admins(client):
    client.force_login(member("sid"))
    assert client.get(reverse("console:rules")).status_code == 403


@pytest.mark.parametrize("calls", [10, 1000])
def test_the_simulator_keeps_its_queries_as_recorded_calls_grow(client, calls, django_assert_num_queries):
    client.force_login(reviewer("ada"))
    recorded_notes(calls // 2)
    recorded_posts(calls - calls // 2)
    with django_assert_num_queries(QUERIES):
        page = client.get(reverse("console:rules"), DRAFT)
    assert f"{calls} calls of the last 30 days judged again" in page.text
    assert f'<strong id="changed">{calls // 2} would go another way</strong>' in page.text


# Signing in (session, user, membership, is a reviewer, tenant); the rules listed; the rules for the
# engine; the recorded calls; the admins' overrides of the agents among them; the standing grants.
QUERIES = 10


def test_a_rule_that_applies_only_after_something_ran_is_drafted_saved_and_shown_in_words(client):
    client.force_login(member("tia", tenant_admin=True))
    after = {"after_kind": "effect", "after_value": "network", "after_scope": "conversation"}
    saved = client.post(reverse("console:rules"), DRAFT | after, follow=True)
    assert "Saved the rule &quot;ask for notes&quot;." in saved.text
    rule = ApprovalRule.objects.get()
    assert rule.after == {"effect": "network", "scope": "conversation"}
    assert "after a call with a network effect in this conversation" in saved.text
    editing = client.get(reverse("console:rules"), {"edit": rule.pk})
    assert '<option value="effect" selected>' in editing.text
    assert 'name="after_value" value="network"' in editing.text

    bad = client.get(reverse("console:rules"), DRAFT | {"after_kind": "toolPattern", "after_value": ""})
    assert bad.status_code == 400
    assert 'id="error-after_kind">toolPattern: a glob on tool ids' in bad.text


def test_escalation_steps_and_a_budget_are_rows_of_fields_in_words(client):
    client.force_login(member("tia", tenant_admin=True))
    reviewer("sam", role="senior")
    page = client.get(reverse("console:rules"))
    assert '<option value="ask_once">ask on first use in a conversation</option>' in page.text
    assert '<label for="id_condition">Only when:</label>' in page.text
    steps = {
        "esc_0_after": "600",
        "esc_0_action": "raiseRole",
        "esc_0_value": "senior",
        "esc_1_after": "900",
        "esc_1_action": "notify",
        "esc_1_value": "sam, tia",
        "esc_2_after": "3600",
        "esc_2_action": "expire",
        "budget_scope": "run",
        "budget_max_calls": "3",
        "budget_sum_of": "/amountCents",
        "budget_max_sum": "5000",
        "budget_over": "deny",
    }
    saved = client.post(reverse("console:rules"), DRAFT | steps, follow=True)
    assert "Saved the rule &quot;ask for notes&quot;." in saved.text, saved.text
    rule = ApprovalRule.objects.get()
    assert rule.escalation == [
        {"afterSeconds": 600, "raiseRole": "senior"},
        {"afterSeconds": 900, "notify": ["sam", "tia"]},
        {"afterSeconds": 3600, "expire": True},
    ]
    assert rule.budget == {
        "scope": "run",
        "maxCalls": 3,
        "sumOf": "/amountCents",
        "maxSum": 5000,
        "overBudget": "deny",
    }
    editing = client.get(reverse("console:rules"), {"edit": rule.pk}).text
    assert 'name="esc_1_value" value="sam, tia"' in editing
    assert 'name="budget_max_calls" value="3"' in editing

    out_of_order = DRAFT | {
        "esc_0_after": "600",
        "esc_0_action": "expire",
        "esc_1_after": "60",
        "esc_1_action": "notify",
    }
    bad = client.get(reverse("console:rules"), out_of_order)
    assert bad.status_code == 400
    assert "Escalation: " in bad.text


def test_a_rule_with_more_steps_than_the_open_rows_keeps_them_all_when_edited(client):
    client.force_login(member("tia", tenant_admin=True))
    steps = [{"afterSeconds": 60 * (n + 1), "notify": ["tia"]} for n in range(6)]
    rule = ApprovalRule.objects.create(
        tenant=default_tenant(), name="many", tool_pattern="x.*", escalation=steps
    )
    editing = client.get(reverse("console:rules"), {"edit": rule.pk}).text
    assert "<details open><summary>More steps</summary>" in editing
    fields = DRAFT | {"rule": rule.pk, "name": "many"}
    for n in range(6):
        fields |= {f"esc_{n}_after": str(60 * (n + 1)), f"esc_{n}_action": "notify", f"esc_{n}_value": "tia"}
    client.post(reverse("console:rules"), fields)
    rule.refresh_from_db()
    assert rule.escalation == steps
