"""Notifications by mail over real SMTP, and the one-time decision links in them."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from approvals.actions.decisions import check_complete_approval
from approvals.actions.rules import check_save_rule
from approvals.links import token_hash
from approvals.models import Approval, Decision, DecisionLink, Notification, Reviewer
from approvals.notifications import (
    deliver_due_notifications,
    eligible_deciders,
    queue_new_approvals,
    remind_due_approvals,
)
from packs.acme_ops.status_page import STATUS_PAGE
from runs.actions import check_start_run
from runs.models import Run, RunStatus
from tests.factories import default_tenant, member, other_tenant, principal, reviewer
from tests.smtp_sink import running_sink

pytestmark = pytest.mark.django_db(transaction=True)

LINK = re.compile(r"(Approve|Reject|Request changes):\s+(\S+/console/decide/([\w-]+)/)")


@pytest.fixture
def sink(settings):
    with running_sink(settings) as handler:
        yield handler


def with_mail(user, *, notify: str | None = None):
    user.email = f"{user.username}@acme.test"
    user.save(update_fields=["email"])
    if notify is not None:
        Reviewer.objects.filter(user=user).update(notify=notify)
    return user


def senior_rule(**fields):
    return check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "status posts need a senior",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "required_role": "senior",
        }
        | fields,
        acting_user=None,
        surface="system",
    )


def status_run(message="Checkout is back to normal.", **options) -> Run:
    if "acting_user" not in options:
        options.setdefault("principal", principal())
    return check_start_run(
        tenant=default_tenant(), agent_id="acme-ops.status-agent", input={"userMessage": message}, **options
    )


def links_in(mail) -> dict[str, str]:
    """Action → the token of the link, from a notification's text."""
    body = mail["message"].get_body(preferencelist=("plain",)).get_content()
    return {action.lower().replace(" ", "_"): token for action, _url, token in LINK.findall(body)}


def to_whom(sink) -> list[str]:
    return sorted(address for mail in sink.received for address in mail["to"])


def unchanged(run: Run, approval: Approval) -> None:
    run.refresh_from_db()
    approval.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED
    assert approval.status == "pending"
    assert not Decision.objects.filter(approval=approval).exists()
    assert STATUS_PAGE.posts == []


def csrf_of(page) -> str:
    return re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page.content).group(1).decode()


class TestWhoIsTold:
    def test_the_mail_reaches_exactly_the_eligible_reviewers(self, sink, settings):
        settings.KINDGI_FOUR_EYES = True
        senior_rule()
        starter = with_mail(reviewer("ann", role="admin"))  # four-eyes: not the starter
        with_mail(reviewer("sam", role="senior"))
        with_mail(reviewer("sue", role="admin"))
        with_mail(reviewer("rita", role="standard"))  # the role is too low
        with_mail(reviewer("nora", role="senior"), notify="none")  # chose no mail
        with_mail(reviewer("olga", role="admin", tenant=other_tenant()))  # another tenant
        with_mail(member("mo"))  # not a reviewer
        run = status_run(acting_user=starter)
        assert run.status == RunStatus.SUSPENDED

        # Suspending the run works out no one to tell: the sweep does, then mails them.
        assert sink.received == []
        assert not Notification.objects.exists()
        assert Approval.objects.get(run=run).notified_at is None
        sent = deliver_due_notifications()
        assert Approval.objects.get(run=run).notified_at is not None

        assert to_whom(sink) == ["sam@acme.test", "sue@acme.test"]
        assert len(sent.done) == 2
        mail = sink.received[0]["message"]
        body = mail.get_body(preferencelist=("plain",)).get_content()
        assert mail["Subject"] == 'Kindgi: Post "Checkout is back to normal." to the public status page'
        assert mail["Auto-Submitted"] == "auto-generated"
        assert '"message": "Checkout is back to normal."' in body or "Checkout is back to normal." in body
        assert 'rule "status posts need a senior"' in body
        assert f"/console/runs/{run.pk}/" in body
        assert set(links_in(sink.received[0])) == {"approve", "request_changes", "reject"}
        # Nothing is sent twice, and nora's notification is closed unsent.
        assert deliver_due_notifications().done == []
        assert len(sink.received) == 2
        assert Notification.objects.filter(done_at__isnull=True).count() == 0

    def test_the_mail_tells_the_parameters_the_run_was_given(self, sink):
        from kindgi import ModelReply, ToolCall
        from tests.pack_fixtures.probes import SCRIPT

        with_mail(reviewer("sam"))
        SCRIPT.replies = [
            ModelReply(tool_calls=(ToolCall(id="w", tool_id="probe.write", arguments={"label": "x"}),))
        ]
        run = check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="probe.toned",
            input={"userMessage": "Go", "tone": "formal"},
        )
        assert run.status == RunStatus.SUSPENDED
        deliver_due_notifications()
        body = sink.received[0]["message"].get_body(preferencelist=("plain",)).get_content()
        assert '  Run with:  tone="formal"' in body.splitlines()

    def test_only_hashes_of_the_tokens_are_kept(self, sink):
        with_mail(reviewer("sam", role="senior"))
        status_run()
        deliver_due_notifications()
        tokens = links_in(sink.received[0]).values()
        stored = set(DecisionLink.objects.values_list("token_hash", flat=True))
        assert stored == {token_hash(token) for token in tokens}
        assert not stored & set(tokens)

    def test_a_connection_owner_is_not_told_of_an_ordinary_approval(self, sink):
        with_mail(member("mo"))
        status_run()
        deliver_due_notifications()
        assert sink.received == []


class TestDecisionLinks:
    @pytest.fixture
    def told(self, sink):
        sam = with_mail(reviewer("sam", role="senior"))
        sue = with_mail(reviewer("sue", role="senior"))
        run = status_run()
        deliver_due_notifications()
        by_person = {mail["to"][0].split("@")[0]: links_in(mail) for mail in sink.received}
        return run, Approval.objects.get(run=run), by_person, sam, sue

    def test_opening_a_link_decides_nothing(self, told):
        run, approval, links, *_ = told
        browser = Client(enforce_csrf_checks=True)
        page = browser.get(f"/console/decide/{links['sam']['approve']}/")
        assert page.status_code == 200
        assert b"Opening this link decided nothing" in page.content
        assert b"acme-ops.post-update" in page.content
        browser.head(f"/console/decide/{links['sam']['approve']}/")
        unchanged(run, approval)

    def test_the_post_decides_once_through_the_decision_rights(self, told):
        run, approval, links, *_ = told
        browser = Client(enforce_csrf_checks=True)
        url = f"/console/decide/{links['sam']['approve']}/"
        # Without the page's CSRF token, nothing is decided.
        assert browser.post(url, {"rationale": "fine"}).status_code == 403
        unchanged(run, approval)

        page = browser.get(url)
        answer = browser.post(url, {"rationale": "fine", "csrfmiddlewaretoken": csrf_of(page)})
        assert answer.status_code == 200
        approval.refresh_from_db()
        run.refresh_from_db()
        assert approval.status == "approved"
        assert approval.decision.reviewer_name == "Sam"
        assert approval.decision.reviewer_role_at_decision == "senior"
        assert run.status == RunStatus.COMPLETED
        assert [post.message for post in STATUS_PAGE.posts] == ["Checkout is back to normal."]

        # A second use is refused and changes nothing.
        again = browser.post(url, {"rationale": "again", "csrfmiddlewaretoken": csrf_of(page)})
        assert again.status_code == 410
        assert Decision.objects.filter(approval=approval).count() == 1

    def test_a_request_changes_link_needs_the_note_and_sends_the_call_back(self, told):
        run, approval, links, *_ = told
        browser = Client(enforce_csrf_checks=True)
        url = f"/console/decide/{links['sam']['request_changes']}/"
        page = browser.get(url)
        assert b"send this call back</strong> to the agent" in page.content
        refused = browser.post(url, {"rationale": " ", "csrfmiddlewaretoken": csrf_of(page)})
        assert refused.status_code == 400
        assert b"a request for changes needs a note saying what to change" in refused.content
        unchanged(run, approval)
        note = "Say it is back and we are watching."
        answer = browser.post(url, {"rationale": note, "csrfmiddlewaretoken": csrf_of(page)})
        assert answer.status_code == 200
        approval.refresh_from_db()
        run.refresh_from_db()
        assert approval.status == "changes_requested"
        assert run.approvals.get(status="pending").arguments == {"message": note}
        assert STATUS_PAGE.posts == []

    def test_a_link_dies_when_someone_else_decides(self, told):
        _run, approval, links, sam, _sue = told
        check_complete_approval(approval_id=approval.pk, acting_user=sam, decision="approve")
        browser = Client(enforce_csrf_checks=True)
        url = f"/console/decide/{links['sue']['reject']}/"
        page = browser.get(url)
        assert page.status_code == 410
        assert b"already approved" in page.content
        token = browser.cookies["csrftoken"].value if "csrftoken" in browser.cookies else "x"
        assert browser.post(url, {"rationale": "no", "csrfmiddlewaretoken": token}).status_code in (403, 410)
        approval.refresh_from_db()
        assert approval.status == "approved"
        assert Decision.objects.filter(approval=approval).count() == 1

    def test_forged_and_expired_links_are_refused_and_change_nothing(self, told):
        run, approval, links, *_ = told
        browser = Client()
        assert browser.get("/console/decide/not-a-real-token/").status_code == 410
        assert browser.post("/console/decide/not-a-real-token/", {"rationale": "x"}).status_code == 410
        DecisionLink.objects.filter(token_hash=token_hash(links["sam"]["approve"])).update(
            expires_at=timezone.now() - timedelta(seconds=1)
        )
        assert browser.get(f"/console/decide/{links['sam']['approve']}/").status_code == 410
        assert (
            browser.post(f"/console/decide/{links['sam']['approve']}/", {"rationale": "x"}).status_code == 410
        )
        unchanged(run, approval)

    def test_a_deactivated_reviewers_link_decides_nothing(self, told):
        run, approval, links, sam, _sue = told
        sam.is_active = False
        sam.save(update_fields=["is_active"])
        url = f"/console/decide/{links['sam']['approve']}/"
        page = Client().get(url)
        assert page.status_code == 409
        assert b"sam&#x27;s account is deactivated" in page.content
        assert Client().post(url, {"rationale": "ok"}).status_code == 409
        unchanged(run, approval)
        # Nor is anyone deactivated mailed of an approval.
        assert "sam" not in [user.username for user in eligible_deciders(approval)]

    def test_a_rejection_needs_a_rationale_and_keeps_the_link_until_it_has_one(self, told):
        run, approval, links, *_ = told
        browser = Client(enforce_csrf_checks=True)
        url = f"/console/decide/{links['sam']['reject']}/"
        page = browser.get(url)
        refused = browser.post(url, {"rationale": " ", "csrfmiddlewaretoken": csrf_of(page)})
        assert refused.status_code == 400
        assert b"a rejection needs a rationale" in refused.content
        unchanged(run, approval)
        decided = browser.post(url, {"rationale": "not now", "csrfmiddlewaretoken": csrf_of(page)})
        assert decided.status_code == 200
        approval.refresh_from_db()
        assert (approval.status, approval.decision.rationale) == ("rejected", "not now")
        assert STATUS_PAGE.posts == []

    def test_a_link_expires_with_its_approval_and_in_72_hours_at_most(self, sink):
        senior_rule(ttl_seconds=300)
        with_mail(reviewer("sam", role="senior"))
        status_run()
        deliver_due_notifications()
        approval = Approval.objects.get()
        for link in DecisionLink.objects.all():
            assert link.expires_at == approval.expires_at
        senior_rule(name="another", tool_pattern="acme-ops.*", ttl_seconds=None)
        Approval.objects.update(expires_at=None)
        DecisionLink.objects.all().delete()
        Notification.objects.update(done_at=None)
        before = timezone.now()
        deliver_due_notifications()
        for link in DecisionLink.objects.all():
            assert before + timedelta(hours=72) - timedelta(minutes=1) < link.expires_at
            assert link.expires_at <= timezone.now() + timedelta(hours=72)


class TestChoices:
    def test_a_digest_gathers_what_is_new_into_one_mail_every_few_minutes(self, sink):
        with_mail(reviewer("sam", role="senior"), notify="digest")
        status_run("First.")
        status_run("Second.")
        deliver_due_notifications()
        assert len(sink.received) == 1
        assert sink.received[0]["message"]["Subject"] == "Kindgi: 2 approval(s) waiting for you"
        status_run("Third.")
        deliver_due_notifications()
        assert len(sink.received) == 1  # the next digest is not due yet
        deliver_due_notifications(now=timezone.now() + timedelta(minutes=16))
        assert len(sink.received) == 2
        assert "Third." in sink.received[1]["message"].get_body(preferencelist=("plain",)).get_content()

    def test_reminders_come_once_before_expiry(self, sink, settings):
        settings.KINDGI_REMINDER_SECONDS = 600
        senior_rule(ttl_seconds=900)
        with_mail(reviewer("sam", role="senior"))
        status_run()
        deliver_due_notifications()
        assert remind_due_approvals().done == []  # 900 s away: not yet
        later = timezone.now() + timedelta(seconds=400)
        assert len(remind_due_approvals(now=later).done) == 1
        assert remind_due_approvals(now=later).done == []
        deliver_due_notifications(now=later)
        assert [mail["message"]["Subject"] for mail in sink.received] == [
            'Kindgi: Post "Checkout is back to normal." to the public status page',
            'Kindgi reminder: Post "Checkout is back to normal." to the public status page expires soon',
        ]

    def test_reviewers_choose_through_the_api(self, client):
        sam = reviewer("sam", role="senior")
        client.force_login(sam)
        answer = client.patch(
            "/api/v1/reviewers/me", {"notify": "digest", "digestMinutes": 30}, content_type="application/json"
        )
        assert answer.status_code == 200, answer.content
        assert (answer.json()["notify"], answer.json()["digestMinutes"]) == ("digest", 30)
        refused = client.patch(
            "/api/v1/reviewers/me", {"notify": "hourly", "every": 3}, content_type="application/json"
        )
        assert refused.status_code == 400
        assert "every" in refused.content.decode()
        assert "notify" in refused.content.decode()
        assert Reviewer.objects.get(user=sam).notify == "digest"

    def test_reviewers_choose_in_the_console(self, client):
        sam = reviewer("sam", role="senior")
        client.force_login(sam)
        assert client.get("/console/notifications/").status_code == 200
        refused = client.post("/console/notifications/", {"notify": "hourly", "digest_minutes": "15"})
        assert refused.status_code == 400
        assert Reviewer.objects.get(user=sam).notify == "immediately"
        saved = client.post("/console/notifications/", {"notify": "none", "digest_minutes": "15"})
        assert saved.status_code == 302
        assert Reviewer.objects.get(user=sam).notify == "none"


class TestEscalation:
    STEPS = [{"afterSeconds": 60, "raiseRole": "senior"}, {"afterSeconds": 120, "expire": True}]

    def test_raise_to_senior_then_expire_each_journaled(self, sink):
        from approvals.escalation import escalate_due_approvals
        from runs.timeline import bars_of

        senior_rule(required_role="", escalation=self.STEPS)
        rita = with_mail(reviewer("rita", role="standard"))
        with_mail(reviewer("sam", role="senior"))
        run = status_run()
        approval = Approval.objects.get()
        start = approval.created_at
        deliver_due_notifications(now=start)
        assert to_whom(sink) == ["rita@acme.test", "sam@acme.test"]
        rita_links = next(links_in(mail) for mail in sink.received if mail["to"] == ["rita@acme.test"])

        assert escalate_due_approvals(now=start + timedelta(seconds=59)).done == []
        reviewers_page = Client()
        reviewers_page.force_login(rita)
        ahead = re.search(
            r'<dd id="escalation-ahead">(.*?)</dd>',
            reviewers_page.get(f"/console/approvals/{approval.pk}/").text,
        ).group(1)
        assert re.findall(r"UTC</time>: ([a-z ]+)", ahead) == ["needs senior", "expires"]
        assert approval.expires_at == approval.escalation_started_at + timedelta(seconds=120)
        assert escalate_due_approvals(now=start + timedelta(seconds=61)).done == [f"{approval.pk} step 1"]
        approval.refresh_from_db()
        assert approval.required_role == "senior"
        assert approval.status == "pending"
        # Rita may no longer decide: her link offers nothing, and a POST is refused through the
        # decision rights all the same.
        with pytest.raises(Exception, match="needs a reviewer with the role 'senior'"):
            check_complete_approval(approval_id=approval.pk, acting_user=rita, decision="approve")
        browser = Client(enforce_csrf_checks=True)
        url = f"/console/decide/{rita_links['approve']}/"
        page = browser.get(url)
        assert page.status_code == 409
        assert b"You can't decide this any more: this approval needs a reviewer with the role" in page.content
        assert b'id="confirm"' not in page.content
        assert Client().post(url, {"rationale": "fine"}).status_code == 409
        approval.refresh_from_db()
        assert approval.status == "pending"
        assert not Decision.objects.filter(approval=approval).exists()
        deliver_due_notifications(now=start + timedelta(seconds=61))
        escalated = [mail for mail in sink.received if "escalation" in mail["message"]["Subject"]]
        assert [mail["to"] for mail in escalated] == [["sam@acme.test"]]
        assert set(links_in(escalated[0])) == {"approve", "request_changes", "reject"}

        assert escalate_due_approvals(now=start + timedelta(seconds=121)).done == [f"{approval.pk} step 2"]
        approval.refresh_from_db()
        run.refresh_from_db()
        assert approval.status == "expired"
        assert run.status == RunStatus.COMPLETED
        assert STATUS_PAGE.posts == []
        steps = [
            entry.payload for entry in run.journal.filter(kind="approval.escalated").order_by("sequence")
        ]
        assert [(step["step"], step["action"]) for step in steps] == [(1, "raiseRole"), (2, "expire")]
        assert steps[0]["requiredRole"] == "senior"
        assert steps[0]["notified"] == ["sam"]
        labels = [
            bar.label for bar in bars_of(run.journal.order_by("sequence"), now=timezone.now(), live=False)
        ]
        assert "escalated: needs senior" in labels
        assert "escalated: expired" in labels
        # Nothing more is due.
        assert escalate_due_approvals(now=start + timedelta(seconds=999)).done == []

    def test_notify_and_add_reviewers_steps(self, sink):
        from approvals.escalation import escalate_due_approvals

        rita = with_mail(reviewer("rita", role="standard"))
        bo = with_mail(reviewer("bo", role="standard"))
        lead = with_mail(member("lead"))
        rule = senior_rule(
            required_role="",
            escalation=[
                {"afterSeconds": 30, "notify": ["lead"]},
                {"afterSeconds": 60, "addReviewers": ["bo"]},
            ],
        )
        rule.reviewers.set([rita])
        status_run()
        approval = Approval.objects.get()
        assert approval.reviewer_ids == [rita.pk]
        escalate_due_approvals(now=approval.created_at + timedelta(seconds=61))
        approval.refresh_from_db()
        assert approval.reviewer_ids == sorted([rita.pk, bo.pk])
        deliver_due_notifications(now=approval.created_at + timedelta(seconds=61))
        escalated = {
            mail["to"][0]: mail for mail in sink.received if "escalation" in mail["message"]["Subject"]
        }
        assert set(escalated) == {"lead@acme.test", "bo@acme.test"}
        assert links_in(escalated["lead@acme.test"]) == {}  # told, but not theirs to decide
        assert set(links_in(escalated["bo@acme.test"])) == {"approve", "request_changes", "reject"}
        del lead

    def test_bad_escalations_are_refused_naming_the_step(self):
        from approvals.exceptions import ApprovalInputError

        for steps, message in [
            ([{"afterSeconds": 60, "raiseRole": "boss"}], "step 1: raiseRole 'boss'"),
            (
                [{"afterSeconds": 60, "expire": True}, {"afterSeconds": 90, "notify": ["x"]}],
                "must be the last",
            ),
            ([{"afterSeconds": 60, "notify": ["nobody-here"]}], "not members of"),
            ([{"afterSeconds": 60}], "exactly one of"),
            ([{"afterSeconds": 60, "raiseRole": "senior", "colour": "red"}], "unknown field(s) colour"),
            (
                [{"afterSeconds": 60, "raiseRole": "senior"}, {"afterSeconds": 30, "expire": True}],
                "later than",
            ),
        ]:
            with pytest.raises(ApprovalInputError, match=re.escape(message)):
                senior_rule(escalation=steps)
        assert not Approval.objects.exists()
        from approvals.models import ApprovalRule

        assert not ApprovalRule.objects.exists()


class TestTwoPersonLinks:
    def test_one_approval_by_link_spends_only_that_persons_links(self, sink):
        senior_rule(required_approvals=2)
        with_mail(reviewer("sam", role="senior"))
        with_mail(reviewer("sue", role="senior"))
        run = status_run()
        deliver_due_notifications()
        links = {mail["to"][0].split("@")[0]: links_in(mail) for mail in sink.received}
        approval = Approval.objects.get(run=run)
        browser = Client(enforce_csrf_checks=True)

        url = f"/console/decide/{links['sam']['approve']}/"
        answer = browser.post(url, {"rationale": "", "csrfmiddlewaretoken": csrf_of(browser.get(url))})
        assert answer.status_code == 200
        assert b"1 of 2" in answer.content
        assert b"needs 1 more approval" in answer.content
        approval.refresh_from_db()
        assert (approval.status, len(approval.approvals_given)) == ("pending", 1)
        # Sam's reject link is spent with his approve link; Sue's still decide.
        assert browser.get(f"/console/decide/{links['sam']['reject']}/").status_code == 410
        url = f"/console/decide/{links['sue']['approve']}/"
        page = browser.get(url)
        assert page.status_code == 200
        assert browser.post(url, {"csrfmiddlewaretoken": csrf_of(page)}).status_code == 200
        approval.refresh_from_db()
        run.refresh_from_db()
        assert (approval.status, run.status) == ("approved", RunStatus.COMPLETED)
        assert [post.message for post in STATUS_PAGE.posts] == ["Checkout is back to normal."]


class TestDelivery:
    def test_a_digest_not_yet_due_does_not_hold_up_the_mail_behind_it(self, sink, settings):
        sam = with_mail(reviewer("sam", role="senior"), notify="digest")
        status_run("First.")
        deliver_due_notifications()  # Sam's first digest: his next is 15 minutes away
        status_run("Second.")
        status_run("Third.")
        queue_new_approvals()  # a sweep: Sam's two are written, to wait for his digest
        with_mail(reviewer("sue", role="senior"))
        status_run("Fourth.")  # Sue's, behind Sam's two that wait for his digest
        queue_new_approvals()
        sent = deliver_due_notifications(limit=2)
        assert [mail["to"] for mail in sink.received] == [["sam@acme.test"], ["sue@acme.test"]]
        assert len(sent.done) == 1
        assert Notification.objects.filter(user=sam, done_at__isnull=True).count() == 3

    def test_a_mail_that_cannot_be_sent_is_tried_again_later_not_at_every_sweep(self, settings):
        from tests.live_server import free_port

        settings.MAILERS = {
            "default": {
                "BACKEND": "django.core.mail.backends.smtp.EmailBackend",
                "OPTIONS": {"host": "127.0.0.1", "port": free_port(), "timeout": 2},
            }
        }
        with_mail(reviewer("sam", role="senior"))
        status_run()
        now = timezone.now()
        failed = deliver_due_notifications(now=now)
        assert failed.done == []
        assert len(failed.left) == 1
        notification = Notification.objects.get()
        assert notification.attempts == 1
        assert "ConnectionRefusedError" in notification.last_error
        assert notification.next_attempt_at == now + timedelta(seconds=30)
        assert deliver_due_notifications(now=now + timedelta(seconds=10)).left == []  # not yet
        with running_sink(settings) as sink:
            assert len(deliver_due_notifications(now=now + timedelta(seconds=31)).done) == 1
        assert [mail["to"] for mail in sink.received] == [["sam@acme.test"]]
