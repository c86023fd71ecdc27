"""A rule with ``after`` applies only once what it names ran before the call: "after this run
read outside data, a write asks". Judged in the gate step, for every kind of run."""

import pytest

from approvals.actions.rules import check_save_rule
from approvals.exceptions import ApprovalInputError
from approvals.models import ApprovalRule
from runs.actions import check_start_run
from runs.models import RunStatus
from tests.factories import default_tenant, principal
from tests.pack_fixtures.probes import SCRIPT
from tests.runs.helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)

FETCH = ("f", "probe.fetch-page", {"url": "https://example.com"})
WRITE = ("w", "probe.write", {"label": "w", "pause_ms": 0})


def after_rule(after: dict, *, gate: str = "always_ask") -> ApprovalRule:
    return check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "writes after outside data",
            "tool_pattern": "probe.write",
            "gate": gate,
            "after": after,
        },
        acting_user=None,
        surface="system",
    )


def test_a_write_asks_only_after_the_run_read_outside_data():
    after_rule({"outsideData": True})
    SCRIPT.replies = [calls(WRITE), answer("written")]
    before = start("probe.free", "write")
    assert before.status == RunStatus.COMPLETED, before.failure_message

    SCRIPT.replies = [calls(FETCH), calls(WRITE), answer("written")]
    after = start("probe.free", "read, then write")
    assert after.status == RunStatus.SUSPENDED
    assert after.waitpoint["callId"] == "w"
    assert after.waitpoint["gate"]["reason"] == (
        'rule "writes after outside data" (always_ask, after outside data was read in this run)'
    )


def test_a_read_that_is_not_outside_data_does_not_count():
    after_rule({"outsideData": True})
    SCRIPT.replies = [
        calls(("r", "probe.read", {"label": "r", "pause_ms": 0})),
        calls(WRITE),
        answer("written"),
    ]
    run = start("probe.free", "read, then write")
    assert run.status == RunStatus.COMPLETED, run.failure_message


def test_a_deny_after_a_tool_refuses_the_later_call_and_tells_the_model():
    after_rule({"toolPattern": "probe.fetch-*"}, gate="deny")
    SCRIPT.replies = [calls(FETCH), calls(WRITE), answer("could not")]
    run = start("probe.free", "read, then write")
    assert run.status == RunStatus.COMPLETED
    refused = run.journal.get(kind="tool.refused")
    assert refused.payload["callId"] == "w"
    assert refused.payload["result"]["error"]["code"] == "TOOL_NOT_ALLOWED"


def _second_turn(first, message: str):
    return check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        agent_id="probe.free",
        input={"userMessage": message},
        conversation_id=first.conversation_id,
    )


@pytest.mark.parametrize(("scope", "asks"), [("conversation", True), ("run", False)])
def test_over_a_conversation_an_earlier_turns_read_counts(scope, asks):
    after_rule({"outsideData": True, "scope": scope})
    SCRIPT.replies = [calls(FETCH), answer("read it"), calls(WRITE), answer("written")]
    first = start("probe.free", "read")
    assert first.status == RunStatus.COMPLETED, first.failure_message
    second = _second_turn(first, "now write")
    assert second.status == (RunStatus.SUSPENDED if asks else RunStatus.COMPLETED)


@pytest.mark.parametrize(
    ("after", "error"),
    [
        ({}, "/after: names exactly one of toolPattern, effect, outsideData"),
        (
            {"outsideData": True, "effect": "network"},
            "/after: names exactly one of toolPattern, effect, outsideData",
        ),
        ({"outsideData": False}, "/after: outsideData: true"),
        ({"effect": "teleports"}, "/after: effect: not one of reads, writes"),
        ({"toolPattern": " "}, "/after: toolPattern: a glob on tool ids"),
        ({"outsideData": True, "scope": "tenant"}, "/after: scope: not one of run, conversation"),
        ({"outsideData": True, "since": 5}, "/after: since: not known"),
        ("outsideData", "/after: an object such as"),
    ],
)
def test_a_bad_after_is_refused_naming_what_is_wrong(after, error):
    with pytest.raises(ApprovalInputError) as refused:
        after_rule(after)
    assert str(refused.value).startswith(error), str(refused.value)
    assert not ApprovalRule.objects.exists()


def test_an_after_is_kept_with_its_scope_said():
    rule = after_rule({"effect": "network"})
    assert rule.after == {"effect": "network", "scope": "run"}
