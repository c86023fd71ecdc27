"""Step-up: a rule's stepUp makes its approvals need the reviewer's passkey. Surfaces without
WebAuthn (API tokens, the CLI, bulk decisions) are refused, naming the console; a standing grant
never stands in for one. (The passkey itself: tests/browser/test_passkey_step_up.py.)"""

import pytest

from approvals.actions.grants import check_create_grant
from approvals.actions.rules import check_save_rule
from approvals.models import Approval, Decision, GrantUse
from runs.actions import check_start_run
from runs.models import RunStatus
from tests.api.conftest import client_for
from tests.factories import default_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def step_up_rule():
    return check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "posts",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "step_up": True,
        },
        acting_user=None,
        surface="system",
    )


def status_run():
    return check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )


def test_an_api_token_is_refused_naming_the_console_and_nothing_changes():
    step_up_rule()
    approval = Approval.objects.get(run=status_run())
    assert approval.gate["stepUp"] is True
    api = client_for(reviewer("rita", role="admin"))
    for body in ({"decision": "approve"}, {"decision": "reject", "rationale": "no"}):
        refused = api.post(f"/api/v1/approvals/{approval.pk}/complete", body, format="json")
        assert refused.status_code == 403
        message = refused.json()["error"]["message"]
        assert message.startswith("this approval asks for the reviewer's passkey: decide it in the console")
        assert f"/console/approvals/{approval.pk}/" in message
    bulk = api.post(
        "/api/v1/approvals/decisions",
        {"decisions": [{"approvalId": str(approval.pk), "decision": "approve"}]},
        format="json",
    )
    assert bulk.json()["results"][0]["status"] == "refused"
    approval.refresh_from_db()
    assert (approval.status, Decision.objects.count()) == ("pending", 0)


def test_a_grant_never_stands_in_for_a_passkey():
    step_up_rule()
    rita = reviewer("rita", role="admin")
    check_create_grant(
        tenant=default_tenant(),
        acting_user=rita,
        fields={
            "toolPattern": "acme-ops.post-update",
            "scope": "principal",
            "principal": principal().username,
            "forSeconds": 600,
            "maxCalls": 5,
        },
        surface="api",
    )
    run = status_run()
    assert run.status == RunStatus.SUSPENDED
    assert not GrantUse.objects.exists()


def test_rules_say_step_up_through_the_api_strictly():
    admin = reviewer("tia", role="admin")
    admin.membership.is_tenant_admin = True
    admin.membership.save()
    api = client_for(admin)
    body = {"name": "posts", "toolPattern": "acme-ops.post-update", "gate": "always_ask", "stepUp": True}
    made = api.post("/api/v1/approval-rules", body, format="json")
    assert made.status_code == 201, made.json()
    assert made.json()["stepUp"] is True
    loose = api.post("/api/v1/approval-rules", body | {"name": "other", "stepUp": "yes"}, format="json")
    assert loose.status_code == 400
    assert "stepUp" in loose.json()["error"]["message"]


@pytest.mark.parametrize(
    "answer",
    [
        "junk",
        "[]",
        '{"response": 5}',
        '{"response": {"clientDataJSON": "!!"}}',
        '{"id": "x", "response": {}}',
        "{" * 5000,
    ],
)
def test_a_broken_passkey_answer_in_the_console_decides_nothing_and_says_so(answer):
    from django.test import Client

    step_up_rule()
    approval = Approval.objects.get(run=status_run())
    client = Client()
    client.force_login(reviewer("rita", role="admin"))
    refused = client.post(f"/console/approvals/{approval.pk}/", {"decision": "approve", "step_up": answer})
    assert refused.status_code == 409
    assert "the passkey did not confirm this decision" in refused.text
    approval.refresh_from_db()
    assert approval.status == "pending"


def test_a_passkey_confirms_the_call_as_asked_so_no_edit_or_grant_comes_with_it():
    step_up_rule()
    approval = Approval.objects.get(run=status_run())
    api = client_for(reviewer("rita", role="admin"))
    for extra, says in (
        (
            {"arguments": {"message": "We were hacked"}},
            "/arguments: this call's rule asks for the reviewer's passkey",
        ),
        (
            {"allow": {"forSeconds": 600, "maxCalls": 3}},
            "/allow: this call's rule asks for the reviewer's passkey",
        ),
    ):
        refused = api.post(
            f"/api/v1/approvals/{approval.pk}/complete", {"decision": "approve"} | extra, format="json"
        )
        assert refused.status_code == 400
        assert refused.json()["error"]["message"].startswith(says)
    approval.refresh_from_db()
    assert approval.status == "pending"


def test_an_edit_cannot_move_a_call_under_a_rule_that_asks_for_a_passkey():
    from tests.pack_fixtures.probes import LEDGER, SCRIPT
    from tests.runs.helpers import answer, calls, start

    for name, fields in (
        ("payments", {"gate": "always_ask"}),
        ("large payments", {"gate": "always_ask", "condition": "/amountCents > 100000", "step_up": True}),
    ):
        check_save_rule(
            tenant=default_tenant(),
            fields={"name": name, "tool_pattern": "probe.pay"} | fields,
            acting_user=None,
            surface="system",
        )
    SCRIPT.replies = [calls(("p", "probe.pay", {"amountCents": 500, "to": "bob"})), answer("paid")]
    approval = Approval.objects.get(run=start("probe.spender", "pay bob"))
    assert not approval.gate.get("stepUp")
    edited = {"decision": "approve", "arguments": {"amountCents": 99_000_000, "to": "bob"}}
    refused = client_for(reviewer("rita", role="admin")).post(
        f"/api/v1/approvals/{approval.pk}/complete", edited, format="json"
    )
    assert refused.status_code == 403
    assert "the edited call's rule asks for the reviewer's passkey" in refused.json()["error"]["message"]
    approval.refresh_from_db()
    assert (approval.status, LEDGER.payments) == ("pending", [])
