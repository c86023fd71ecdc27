"""Tenant approval rules, conditional overrides and expiry, through the engine."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.utils import timezone

from approvals.actions.approvals import expire_due_approvals
from approvals.actions.decisions import check_complete_approval
from approvals.actions.rules import check_save_rule
from approvals.exceptions import ApprovalConflictError, ApprovalInputError, DecisionForbiddenError
from approvals.models import Approval, ApprovalRule, Decision
from packs.acme_ops.status_page import STATUS_PAGE
from runs.actions import check_start_run
from runs.models import Run, RunStatus
from tests.factories import default_tenant, other_tenant, principal, reviewer
from tests.pack_fixtures.probes import SCRIPT, TIMELINE
from tests.runs.helpers import answer, calls

pytestmark = pytest.mark.django_db(transaction=True)


def make_rule(**fields) -> ApprovalRule:
    """A rule saved the way the API and the admin save one."""
    reviewers = fields.pop("reviewers", [])
    tenant = fields.pop("tenant", None) or default_tenant()
    return check_save_rule(
        tenant=tenant,
        fields={"name": fields.pop("name", "rule"), **fields},
        reviewers=reviewers,
        acting_user=None,
        surface="system",
    )


def start(agent: str, message: str = "go") -> Run:
    return check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id=agent,
        input={"userMessage": message},
    )


def tool_result(run: Run, call_id: str):
    return next(m["content"] for m in run.messages if m.get("callId") == call_id)


def test_a_deny_rule_refuses_the_call_as_data_with_its_reason():
    SCRIPT.replies = [calls(("w", "probe.write", {"label": "w"})), answer("ok")]
    make_rule(tool_pattern="probe.write", gate="deny", reason="No writes today.", name="no writes")
    run = start("probe.free")
    assert run.status == RunStatus.COMPLETED
    result = tool_result(run, "w")
    assert result["error"]["code"] == "TOOL_NOT_ALLOWED"
    assert "No writes today." in result["error"]["message"]
    refused = run.journal.get(kind="tool.refused").payload
    assert refused["gate"]["reason"] == 'rule "no writes" (deny): No writes today.'
    assert TIMELINE.calls("w") == 0


def test_a_rule_can_ask_for_a_higher_role():
    make_rule(effect_kind="writes", resource_pattern="probe:*", gate="always_ask", required_role="senior")
    SCRIPT.replies = [calls(("w", "probe.write", {"label": "w"})), answer()]
    run = start("probe.free")
    approval = run.approvals.get()
    assert approval.required_role == "senior"
    assert approval.gate["ruleId"] == ApprovalRule.objects.get().pk
    with pytest.raises(DecisionForbiddenError, match="role 'senior' or higher"):
        check_complete_approval(approval_id=approval.pk, acting_user=reviewer("ada"), decision="approve")
    check_complete_approval(
        approval_id=approval.pk, acting_user=reviewer("sam", role="senior"), decision="approve"
    )
    assert TIMELINE.calls("w") == 1


def test_a_rule_can_name_who_may_decide():
    named = reviewer("nina")
    make_rule(tool_pattern="probe.write", gate="always_ask", reviewers=[named])
    SCRIPT.replies = [calls(("w", "probe.write", {"label": "w"})), answer()]
    approval = start("probe.free").approvals.get()
    with pytest.raises(DecisionForbiddenError, match="only these reviewers may decide this approval: Nina"):
        check_complete_approval(
            approval_id=approval.pk, acting_user=reviewer("root", role="admin"), decision="approve"
        )
    check_complete_approval(approval_id=approval.pk, acting_user=named, decision="approve")
    assert TIMELINE.calls("w") == 1


def test_a_rule_with_a_condition_asks_only_when_it_holds():
    make_rule(tool_pattern="probe.write", gate="always_ask", condition='/label == "big"')
    SCRIPT.replies = [
        calls(
            ("s", "probe.write", {"label": "small", "pause_ms": 0}),
            ("b", "probe.write", {"label": "big", "pause_ms": 0}),
        )
    ]
    run = start("probe.free")
    assert run.status == RunStatus.SUSPENDED
    assert run.waitpoint["callId"] == "b"
    assert TIMELINE.calls("small") == 1
    assert TIMELINE.calls("big") == 0


def test_an_ask_once_rule_asks_on_first_use_only():
    make_rule(tool_pattern="probe.write", gate="ask_once")
    SCRIPT.replies = [
        calls(("w1", "probe.write", {"label": "w1", "pause_ms": 0})),
        calls(("w2", "probe.write", {"label": "w2", "pause_ms": 0})),
        answer(),
    ]
    run = start("probe.free")
    check_complete_approval(
        approval_id=run.approvals.get().pk, acting_user=reviewer("ada"), decision="approve"
    )
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert TIMELINE.calls("w2") == 1
    assert run.approvals.count() == 1


def test_rules_of_another_tenant_do_not_apply():
    make_rule(tenant=other_tenant(), tool_pattern="probe.write", gate="deny")
    SCRIPT.replies = [calls(("w", "probe.write", {"label": "w", "pause_ms": 0})), answer()]
    assert start("probe.free").status == RunStatus.COMPLETED
    assert TIMELINE.calls("w") == 1


def test_a_disabled_rule_does_not_apply():
    make_rule(tool_pattern="probe.write", gate="deny", enabled=False)
    SCRIPT.replies = [calls(("w", "probe.write", {"label": "w", "pause_ms": 0})), answer()]
    start("probe.free")
    assert TIMELINE.calls("w") == 1


def test_a_rule_is_checked_when_saved():
    with pytest.raises(ApprovalInputError) as error:
        make_rule(gate="always_ask", condition="amount > 1", effect_kind="mutates", required_role="boss")
    assert [line.split(":")[0] for line in error.value.errors] == [
        "/effect_kind",
        "/required_role",
        "/condition",
    ]
    assert not ApprovalRule.objects.exists()


class TestConditionalOverrides:
    def test_in_code_an_override_applies_only_when_its_predicate_holds(self):
        SCRIPT.replies = [
            calls(
                ("s", "probe.write", {"label": "small", "pause_ms": 0}),
                ("b", "probe.write", {"label": "big", "pause_ms": 0}),
            )
        ]
        run = start("probe.conditional")
        assert TIMELINE.calls("small") == 1
        assert run.waitpoint["callId"] == "b"
        reasons = [e.payload["gate"]["reason"] for e in run.journal.filter(kind="tool.called")]
        assert reasons == [
            "override never_ask when tests.pack_fixtures.probes._small(arguments) (agent code)"
        ]

    def test_in_the_admin_an_override_applies_only_when_its_condition_holds(self):
        from tools.loading import do_load_catalog
        from tools.models import Agent, AgentGateOverride

        do_load_catalog()
        agent = Agent.objects.get(key="acme-ops.status-agent")
        override = AgentGateOverride(
            agent=agent, tool_key="acme-ops.post-update", gate="never_ask", condition='/message == "routine"'
        )
        override.full_clean()
        override.save()
        routine = start("acme-ops.status-agent", "routine")
        assert routine.status == RunStatus.COMPLETED
        assert [p.message for p in STATUS_PAGE.posts] == ["routine"]
        # otherwise the admin's override does not apply, and neither does the code's it replaced
        other = start("acme-ops.status-agent", "Outage!")
        assert other.status == RunStatus.SUSPENDED
        assert other.waitpoint["gate"]["reason"] == "default: first use of a tool that is not read-only"

    def test_an_admin_override_condition_is_checked_when_saved(self):
        from tools.loading import do_load_catalog
        from tools.models import Agent, AgentGateOverride

        do_load_catalog()
        agent = Agent.objects.get(key="acme-ops.status-agent")
        with pytest.raises(ValidationError, match="is not a condition"):
            AgentGateOverride(
                agent=agent, tool_key="acme-ops.post-update", gate="never_ask", condition="message is routine"
            ).full_clean()


class TestExpiry:
    def waiting_run(self, ttl_seconds=60) -> Run:
        make_rule(tool_pattern="probe.write", gate="always_ask", ttl_seconds=ttl_seconds)
        SCRIPT.replies = [calls(("w", "probe.write", {"label": "w", "pause_ms": 0})), answer()]
        return start("probe.free")

    def test_a_sweep_from_a_process_without_the_runs_pack_leaves_it_pending_and_says_so(self):
        import io

        from django.core.management.base import CommandError
        from django.test import override_settings

        run = self.waiting_run(ttl_seconds=1)
        approval = run.approvals.get()
        Approval.objects.filter(pk=approval.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        errors = io.StringIO()
        with (
            override_settings(KINDGI_PACKS=["packs.my_pack"]),
            pytest.raises(CommandError, match="1 approval"),
        ):
            call_command("expire_approvals", stdout=io.StringIO(), stderr=errors)
        assert (
            f"approval {approval.pk}: run {run.pk}: agent probe.free@1.0.0 is not in this process's packs"
            in (errors.getvalue())
        )
        approval.refresh_from_db()
        run.refresh_from_db()
        assert (approval.status, run.status, run.failure_message) == ("pending", RunStatus.SUSPENDED, "")
        assert not Decision.objects.exists()
        call_command("expire_approvals", stdout=io.StringIO())  # with the packs: expired, and the run goes on
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED

    def test_an_expired_approval_counts_as_a_rejection_and_the_run_goes_on(self):
        run = self.waiting_run()
        approval = run.approvals.get()
        assert approval.expires_at is not None
        assert expire_due_approvals().done == []
        assert len(expire_due_approvals(now=timezone.now() + timedelta(seconds=61)).done) == 1
        approval.refresh_from_db()
        run.refresh_from_db()
        assert approval.status == "expired"
        decision = Decision.objects.get(approval=approval)
        assert (decision.decision, decision.rationale, decision.reviewer) == ("reject", "expired", None)
        assert run.status == RunStatus.COMPLETED
        assert tool_result(run, "w") == {"status": "rejected", "rationale": "expired"}
        assert TIMELINE.calls("w") == 0
        assert expire_due_approvals(now=timezone.now() + timedelta(days=1)).done == []

    def test_an_approval_past_its_time_lets_nothing_run_even_before_the_sweep(self):
        run = self.waiting_run()
        approval = run.approvals.get()
        Approval.objects.filter(pk=approval.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        with pytest.raises(ApprovalConflictError, match="expired at"):
            check_complete_approval(approval_id=approval.pk, acting_user=reviewer("ada"), decision="approve")
        run.refresh_from_db()
        assert run.status == RunStatus.SUSPENDED
        assert TIMELINE.calls("w") == 0

    def test_the_site_default_applies_without_a_rule(self, settings):
        settings.KINDGI_APPROVAL_TTL_SECONDS = 30
        run = start("acme-ops.status-agent", "Up.")
        approval = run.approvals.get()
        assert 25 < (approval.expires_at - approval.created_at).total_seconds() <= 30

    def test_the_command_sweeps(self, capsys):
        run = self.waiting_run(ttl_seconds=1)
        Approval.objects.filter(run=run).update(expires_at=timezone.now() - timedelta(seconds=1))
        call_command("expire_approvals")
        assert "Expired 1 approval(s)." in capsys.readouterr().out
        assert Approval.objects.get(run=run).status == "expired"
