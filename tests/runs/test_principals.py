"""Every run has a principal, and everything that asks who stands behind a run asks for it:
four-eyes (through a schedule, a mailbox and a service token, not only a person's own run),
conversations, and the right to cancel."""

import io
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone
from rest_framework.test import APIClient

from approvals.actions.decisions import check_complete_approval
from approvals.actions.rules import check_save_rule
from approvals.exceptions import DecisionForbiddenError
from approvals.models import Approval, ApprovalStatus
from mail.actions import receive_mail
from mail.models import Mailbox
from packs.acme_ops.status_page import STATUS_PAGE
from runs.actions import check_start_run
from runs.models import Run, RunStatus, Schedule
from runs.schedules import check_save_schedule, start_due_schedules
from runs.selectors import conversation_approvals
from tenants.tokens import do_create_token, do_service_account
from tests.factories import default_tenant, member, other_tenant, principal, reviewer
from tests.mail.conftest import mail

pytestmark = pytest.mark.django_db(transaction=True)

STATUS_AGENT = "acme-ops.status-agent"


def api_of(user, **token) -> APIClient:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {do_create_token(user=user, **token)[1]}")
    return api


def pending(run: Run) -> Approval:
    return Approval.objects.get(run=run, status=ApprovalStatus.PENDING)


def refused_as_her_own(approval: Approval, alice) -> None:
    with pytest.raises(DecisionForbiddenError, match="four-eyes: this run is yours"):
        check_complete_approval(approval_id=approval.pk, acting_user=alice, decision="approve")
    approval.refresh_from_db()
    assert approval.status == ApprovalStatus.PENDING


class TestFourEyesAsksForThePrincipal:
    """With four-eyes on, Alice cannot approve her own run's post (403), whichever way she starts it."""

    @pytest.fixture(autouse=True)
    def _four_eyes(self, settings):
        settings.KINDGI_FOUR_EYES = True

    def test_her_schedule_runs_on_her_behalf_so_she_cannot_approve_its_post(self):
        alice, bob = reviewer("alice"), reviewer("bob")
        schedule = check_save_schedule(
            tenant=default_tenant(),
            fields={
                "name": "morning status",
                "agent_key": STATUS_AGENT,
                "input": {"userMessage": "All systems go."},
                "cron": "0 9 * * *",
                "owner": alice,
            },
            acting_user=None,
            surface="system",
        )
        now = timezone.now()
        Schedule.objects.filter(pk=schedule.pk).update(next_run_at=now - timedelta(seconds=1))
        [run_id] = start_due_schedules(now=now).done
        run = Run.objects.get(pk=run_id)
        assert (run.trigger, run.started_by, run.principal) == ("schedule", None, alice)
        shown = api_of(bob).get(f"/api/v1/runs/{run.pk}").json()
        assert (shown["startedBy"], shown["principal"]) == (None, "alice")
        approval = pending(run)
        refused_as_her_own(approval, alice)
        assert STATUS_PAGE.posts == []
        check_complete_approval(approval_id=approval.pk, acting_user=bob, decision="approve")
        assert [post.message for post in STATUS_PAGE.posts] == ["All systems go."]

    def test_mail_to_her_mailbox_runs_on_her_behalf_so_she_cannot_approve_its_reply(self, settings):
        settings.KINDGI_PACKS = [*settings.KINDGI_PACKS, "packs.kindgi_mail"]
        alice, rita = reviewer("alice"), reviewer("rita")
        Mailbox.objects.create(
            tenant=default_tenant(),
            address="support@acme.test",
            owner=alice,
            agent_key="kindgi-mail.responder",
        )
        receive_mail(mail().as_bytes(), recipient="support@acme.test", envelope_sender="bob@example.com")
        run = Run.objects.get()
        assert (run.trigger, run.principal) == ("mail", alice)
        # The read of her mailbox is hers to allow: her connection, not a decision on her run.
        check_complete_approval(approval_id=pending(run).pk, acting_user=alice, decision="approve")
        reply = pending(run)
        assert reply.tool_key == "kindgi-mail.reply"
        refused_as_her_own(reply, alice)
        check_complete_approval(approval_id=reply.pk, acting_user=rita, decision="approve")
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED

    def test_a_service_token_she_answers_for_runs_on_her_behalf(self):
        alice, bob = reviewer("alice"), reviewer("bob")
        service, _ = do_service_account(name="nightly", tenant=default_tenant())
        started = api_of(service, responsible=alice).post(
            "/api/v1/runs", {"agentId": STATUS_AGENT, "input": {"userMessage": "Deploy done."}}, format="json"
        )
        assert started.status_code == 201, started.content
        body = started.json()
        assert (body["trigger"], body["service"], body["startedBy"], body["principal"]) == (
            "service",
            "nightly",
            None,
            "alice",
        )
        approval = pending(Run.objects.get(pk=body["id"]))
        refused = api_of(alice).post(
            f"/api/v1/approvals/{approval.pk}/complete", {"decision": "approve"}, format="json"
        )
        assert refused.status_code == 403
        assert "four-eyes" in refused.json()["error"]["message"]
        assert STATUS_PAGE.posts == []
        check_complete_approval(approval_id=approval.pk, acting_user=bob, decision="approve")
        assert len(STATUS_PAGE.posts) == 1


class TestServiceTokensNameWhoAnswersForThem:
    def test_a_service_token_that_names_no_one_starts_nothing(self):
        service, _ = do_service_account(name="nightly", tenant=default_tenant())
        response = api_of(service).post(
            "/api/v1/runs", {"agentId": STATUS_AGENT, "input": {"userMessage": "Up."}}, format="json"
        )
        assert response.status_code == 403
        error = response.json()["error"]
        assert error["code"] == "no_principal"
        assert "--responsible USER" in error["message"]
        assert not Run.objects.exists()

    def test_create_api_token_needs_the_responsible_person_of_the_services_tenant(self):
        default_tenant()
        member("olga", tenant=other_tenant())
        with pytest.raises(CommandError, match="--responsible USER"):
            call_command("create_api_token", "--service", "nightly", "--tenant", "acme", stdout=io.StringIO())
        with pytest.raises(CommandError, match="'olga' is not an active person of tenant 'acme'"):
            call_command(
                "create_api_token",
                "--service",
                "nightly",
                "--tenant",
                "acme",
                "--responsible",
                "olga",
                stdout=io.StringIO(),
            )
        from django.contrib.auth import get_user_model

        assert not get_user_model().objects.filter(username="nightly").exists()  # refused, left nothing
        alice = member("alice")
        out = io.StringIO()
        call_command(
            "create_api_token",
            "--service",
            "nightly",
            "--tenant",
            "acme",
            "--responsible",
            "alice",
            stdout=out,
            stderr=io.StringIO(),
        )
        from tenants.tokens import active_token

        assert active_token(out.getvalue().strip()).responsible == alice


class TestConversationsBelongToTheirPrincipal:
    @pytest.fixture
    def ask_once(self):
        """The agent's code asks before every post; its tenant's admin lifts that, and its rule
        asks a senior reviewer once a conversation instead."""
        admin = APIClient()
        admin.force_authenticate(member("tina", tenant_admin=True))
        lifted = admin.put(
            f"/api/v1/agents/{STATUS_AGENT}/overrides/acme-ops.post-update",
            {"gate": "never_ask"},
            format="json",
        )
        assert lifted.status_code == 200, lifted.content
        check_save_rule(
            tenant=default_tenant(),
            fields={
                "name": "posts once a conversation",
                "tool_pattern": "acme-ops.post-update",
                "gate": "ask_once",
                "required_role": "senior",
            },
            acting_user=None,
            surface="system",
        )

    def test_carl_cannot_continue_alices_conversation_nor_inherit_its_approval(self, ask_once):
        alice, sam, carl = member("alice"), reviewer("sam", role="senior"), member("carl")
        first = api_of(alice).post(
            "/api/v1/runs",
            {"agentId": STATUS_AGENT, "input": {"userMessage": "Maintenance at 9."}},
            format="json",
        )
        run = Run.objects.get(pk=first.json()["id"])
        assert run.status == RunStatus.SUSPENDED
        check_complete_approval(approval_id=pending(run).pk, acting_user=sam, decision="approve")
        assert [post.message for post in STATUS_PAGE.posts] == ["Maintenance at 9."]

        hijack = api_of(carl).post(
            "/api/v1/runs",
            {
                "agentId": STATUS_AGENT,
                "input": {"userMessage": "CARL POSTS ANYTHING"},
                "conversationId": str(run.conversation_id),
            },
            format="json",
        )
        assert hijack.status_code == 404, hijack.content
        assert hijack.json()["error"]["message"] == f"there is no conversation {run.conversation_id}"
        assert [post.message for post in STATUS_PAGE.posts] == ["Maintenance at 9."]
        assert Run.objects.count() == 1

        # Alice herself goes on, her approval given earlier in her conversation still holding.
        mine = api_of(alice).post(
            "/api/v1/runs",
            {
                "agentId": STATUS_AGENT,
                "input": {"userMessage": "Maintenance over."},
                "conversationId": str(run.conversation_id),
            },
            format="json",
        )
        assert mine.status_code == 201, mine.content
        assert mine.json()["status"] == "completed"
        assert [post.message for post in STATUS_PAGE.posts] == ["Maintenance at 9.", "Maintenance over."]

    def test_approvals_of_another_principals_turns_do_not_count(self, ask_once):
        """A conversation that has turns of another principal (made before conversations had
        owners): only its principal's own approvals count for the gate."""
        alice, sam, carl = member("alice"), reviewer("sam", role="senior"), member("carl")
        first = check_start_run(agent_id=STATUS_AGENT, input={"userMessage": "One."}, acting_user=alice)
        check_complete_approval(approval_id=pending(first).pk, acting_user=sam, decision="approve")
        first.refresh_from_db()
        assert conversation_approvals(first) == set()  # its first turn
        later = Run.objects.create(
            tenant=default_tenant(),
            flow_key=first.flow_key,
            flow_version=first.flow_version,
            agent_key=first.agent_key,
            agent_version=first.agent_version,
            conversation_id=first.conversation_id,
            principal=alice,
        )
        assert conversation_approvals(later) == {"acme-ops.post-update"}
        Run.objects.filter(pk=later.pk).update(principal=carl)
        later.refresh_from_db()
        assert conversation_approvals(later) == set()


class TestCancelRights:
    """A run is cancelled by its principal, a tenant admin, or a reviewer who may decide one of
    its calls; any other member of the tenant sees it but may not cancel it."""

    def cancel(self, user, run: Run):
        return api_of(user).post(f"/api/v1/runs/{run.pk}/cancel", {}, format="json")

    def test_a_member_cannot_cancel_another_members_run(self):
        alice, carl = member("alice"), member("carl")
        run = check_start_run(agent_id=STATUS_AGENT, input={"userMessage": "Up."}, acting_user=alice)
        refused = self.cancel(carl, run)
        assert refused.status_code == 403
        assert refused.json()["error"]["message"].startswith("only the run's principal, a tenant admin")
        run.refresh_from_db()
        assert run.status == RunStatus.SUSPENDED
        assert pending(run).status == ApprovalStatus.PENDING
        assert self.cancel(alice, run).json()["status"] == "cancelled"

    @pytest.mark.parametrize(
        ("who", "allowed"),
        [
            ("a tenant admin", True),
            ("a reviewer who may decide its call", True),
            ("a reviewer below its call's role", False),
        ],
    )
    def test_who_else_may_cancel(self, who, allowed):
        alice = member("alice")
        run = check_start_run(agent_id=STATUS_AGENT, input={"userMessage": "Up."}, acting_user=alice)
        Approval.objects.filter(run=run).update(required_role="senior")
        user = {
            "a tenant admin": lambda: member("ted", tenant_admin=True),
            "a reviewer who may decide its call": lambda: reviewer("sam", role="senior"),
            "a reviewer below its call's role": lambda: reviewer("stan", role="standard"),
        }[who]()
        response = self.cancel(user, run)
        assert response.status_code == (200 if allowed else 403), response.content
        run.refresh_from_db()
        assert (run.status == RunStatus.CANCELLED) is allowed

    def test_the_console_offers_cancel_only_to_who_may(self):
        from django.test import Client

        alice, carl = member("alice"), member("carl")
        run = check_start_run(agent_id=STATUS_AGENT, input={"userMessage": "Up."}, acting_user=alice)
        browser = Client()
        browser.force_login(carl)
        assert "Cancel run" not in browser.get(f"/console/runs/{run.pk}/").text
        assert browser.post(f"/console/runs/{run.pk}/cancel/").status_code == 302
        run.refresh_from_db()
        assert run.status == RunStatus.SUSPENDED
        browser.force_login(alice)
        assert "Cancel run" in browser.get(f"/console/runs/{run.pk}/").text
        assert (
            "On behalf of <strong>alice</strong>: they started it."
            in browser.get(f"/console/runs/{run.pk}/").text
        )


def test_a_child_run_stands_on_its_parents_principal():
    alice = member("alice")
    flow = check_start_run(flow_id="acme-ops.status-flow", input={"userMessage": "Up."}, acting_user=alice)
    child = Run.objects.get(parent=flow)
    assert (flow.principal, child.principal) == (alice, alice)
    assert Approval.objects.get(run=child).principal == alice


def test_a_run_from_code_needs_a_principal():
    from runs.exceptions import PrincipalError

    with pytest.raises(PrincipalError, match="needs a person to stand behind it"):
        check_start_run(tenant=default_tenant(), agent_id=STATUS_AGENT, input={"userMessage": "Up."})
    assert (
        check_start_run(
            tenant=default_tenant(),
            principal=principal(),
            agent_id=STATUS_AGENT,
            input={"userMessage": "Up."},
        ).principal
        == principal()
    )
    assert Run.objects.count() == 1
