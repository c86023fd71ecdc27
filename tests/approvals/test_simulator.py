"""The rule simulator: a draft rule judged against recorded calls by the call policy's gate."""

import pytest
from django.utils import timezone

from approvals.actions.rules import check_save_rule
from approvals.models import ApprovalRule
from approvals.simulator import draft_rule, simulate
from runs.actions import check_start_run
from tests.factories import default_tenant, other_tenant, principal
from tests.runs.decide import decide

pytestmark = pytest.mark.django_db(transaction=True)
NEW = 2**62


def note(text: str, tenant=None):
    return check_start_run(
        tenant=tenant or default_tenant(),
        principal=principal(tenant or default_tenant()),
        flow_id="my-pack.note-order",
        input={"orderId": "ord_1001", "text": text},
    )


def status(message: str, decision: str):
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": message},
    )
    return decide(run, "call_post_update", decision, rationale="no")


def rule(**fields) -> dict:
    return {"name": "draft", "gate": "always_ask", "tool_pattern": "*", "agent_pattern": "*"} | fields


def tried(fields: dict | None, *, replacing=None, days=30):
    draft = draft_rule(fields, rule_id=replacing or NEW) if fields is not None else None
    return simulate(default_tenant(), draft, replacing=replacing, days=days, now=timezone.now())


@pytest.fixture
def history():
    note("first")
    note("second")
    note("Globex's", tenant=other_tenant())  # another tenant's: never judged here
    status("Up again", "approve")
    status("Down again", "reject")


def test_a_draft_that_asks_about_notes_would_have_stopped_the_two_that_ran(history):
    simulation = tried(rule(name="ask for notes", tool_pattern="my-pack.add-order-note"))
    # Each note flow looks the order up (read-only), then writes; two status posts were asked about.
    assert simulation.judged == 6
    assert simulation.matrix == {("ran", "ran"): 2, ("ran", "asked"): 2, ("asked", "asked"): 2}
    assert simulation.changed == 2
    assert {change.arguments["text"] for change in simulation.changes} == {"first", "second"}
    assert {change.reason for change in simulation.changes} == {'rule "ask for notes" (always_ask)'}


def test_a_deny_wins_over_an_agents_ask_and_a_never_ask_cannot_lower_it(history):
    denied = tried(rule(name="no status posts", tool_pattern="acme-ops.*", gate="deny", reason="frozen"))
    assert denied.matrix == {("ran", "ran"): 4, ("asked", "denied"): 2}
    # The tenant's rule is a floor under the agent's code, never a ceiling: its ask still asks.
    lowered = tried(rule(name="let posts through", tool_pattern="acme-ops.post-update", gate="never_ask"))
    assert lowered.matrix == {("ran", "ran"): 4, ("asked", "asked"): 2}
    assert lowered.changed == 0


def test_an_edit_replaces_the_rule_it_edits_and_a_condition_reads_the_recorded_arguments():
    saved = check_save_rule(
        tenant=default_tenant(),
        fields=rule(name="no notes", tool_pattern="my-pack.add-order-note", gate="deny"),
        acting_user=None,
        surface="system",
    )
    note("private")
    note("public")
    assert tried(None, replacing=saved.pk).matrix == {("ran", "ran"): 2, ("denied", "ran"): 2}  # disabled
    edit = rule(
        name="no private notes",
        tool_pattern="my-pack.add-order-note",
        gate="deny",
        condition='/text == "private"',
    )
    simulation = tried(edit, replacing=saved.pk)
    assert simulation.matrix == {("ran", "ran"): 2, ("denied", "denied"): 1, ("denied", "ran"): 1}
    assert [change.arguments["text"] for change in simulation.changes] == ["public"]
    assert ApprovalRule.objects.get(pk=saved.pk).condition == ""  # nothing was saved


def test_the_window_and_the_limit_bound_what_is_judged(history, monkeypatch):
    from approvals import simulator

    assert tried(rule(), days=0).judged == 0
    monkeypatch.setattr(simulator, "LIMIT", 3)
    capped = tried(rule())
    assert (capped.judged, capped.capped) == (3, True)


def test_a_draft_with_after_sees_what_ran_before_each_call_in_its_run():
    """Judged in order: the write of the run that fetched a page first would ask; the write of
    the run that did not, and the fetch itself, would run."""
    from tests.pack_fixtures.probes import SCRIPT
    from tests.runs.helpers import answer, calls, start

    write = ("w", "probe.write", {"label": "w", "pause_ms": 0})
    SCRIPT.replies = [calls(write), answer("written")]
    start("probe.free", "write")
    SCRIPT.replies = [
        calls(("f", "probe.fetch-page", {"url": "https://example.com"})),
        calls(write),
        answer("ok"),
    ]
    fetched = start("probe.free", "read, then write")

    simulation = tried(
        rule(name="after outside data", tool_pattern="probe.write", after={"outsideData": True})
    )
    assert simulation.matrix == {("ran", "ran"): 2, ("ran", "asked"): 1}
    [change] = simulation.changes
    assert change.run_id == fetched.pk
    assert change.reason == 'rule "after outside data" (always_ask, after outside data was read in this run)'


def test_a_draft_with_a_budget_is_judged_with_the_budget_used_as_the_calls_would_have_used_it():
    from tests.pack_fixtures.probes import SCRIPT
    from tests.runs.helpers import answer, calls, start

    SCRIPT.replies = [
        calls(*[(f"p{n}", "probe.pay", {"amountCents": 60_000, "to": "bob"}) for n in range(3)]),
        answer("paid"),
    ]
    start("probe.spender", "pay bob three times")
    budget = {"scope": "run", "sumOf": "/amountCents", "maxSum": 100_000}
    simulation = tried(rule(name="payments", tool_pattern="probe.pay", gate="never_ask", budget=budget))
    assert simulation.matrix == {("ran", "ran"): 1, ("ran", "asked"): 2}
    assert {change.reason for change in simulation.changes} == {
        'rule "payments" (never_ask); over budget: 60,000 of 100,000 used in this run; this call 60,000'
    }


def test_the_simulator_says_which_asks_a_standing_grant_now_covers():
    from approvals.actions.grants import check_create_grant
    from tests.factories import reviewer

    status("Up again", "approve")
    status("Down again", "approve")
    assert tried(rule(name="posts", tool_pattern="acme-ops.post-update")).granted == 0
    check_create_grant(
        tenant=default_tenant(),
        acting_user=reviewer("gia", role="admin"),
        fields={
            "toolPattern": "acme-ops.post-update",
            "scope": "principal",
            "principal": principal(default_tenant()).username,
            "maxCalls": 5,
            "forSeconds": 600,
        },
        surface="api",
    )
    simulation = tried(rule(name="posts", tool_pattern="acme-ops.post-update"))
    assert simulation.granted == 2
    assert simulation.matrix == {("asked", "asked"): 2}
