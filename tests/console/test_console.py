"""The reviewer console, server side: what each page shows, what each form does, what it refuses."""

import html

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from approvals.models import Approval, Decision
from packs.acme_ops.status_page import STATUS_PAGE
from runs.actions import check_start_run
from runs.models import Run
from tests.factories import default_tenant, member, other_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def waiting(message="Checkout is back to normal.", tenant=None) -> Run:
    return check_start_run(
        tenant=tenant or default_tenant(),
        principal=principal(tenant or default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": message},
    )


def test_sign_in_is_required_and_works():
    response = Client().get("/console/queue/")
    assert response.status_code == 302
    assert response["Location"].startswith("/console/login/")
    ada = reviewer("ada")
    signed = Client().post("/console/login/", {"username": "ada", "password": "a-long-test-password"})
    assert signed.status_code == 302
    assert signed["Location"] == "/console/queue/"
    assert ada.is_authenticated


def test_a_user_who_is_not_a_reviewer_sees_why_and_what_to_do():
    page = signed_in(member("carl")).get("/console/queue/")
    assert page.status_code == 403
    assert "You are not a reviewer yet" in page.text
    assert "ask one to register you as a reviewer" in page.text
    loner = signed_in(get_user_model().objects.create_user("loner"))
    assert "You belong to no tenant" in loner.get("/console/queue/").text


def test_the_queue_lists_pending_approvals_with_what_they_do(django_assert_max_num_queries):
    run = waiting()
    client = signed_in(reviewer("ada"))
    page = client.get("/console/queue/")
    assert page.status_code == 200
    assert "acme-ops.post-update" in page.text
    assert "acts outside Kindgi, on external:status-page (an external side effect)" in page.text
    assert "Posts a message to the public status page." in page.text
    assert "{&quot;message&quot;: &quot;Checkout is back to normal.&quot;}" in page.text  # the arguments
    assert "Checkout is back to normal." in page.text  # what the user asked
    assert "override always_ask (agent code)" in page.text  # why it waits
    assert "acme-ops.status-agent" in page.text
    assert str(run.pk)[:8] in page.text
    assert 'ws-connect="/ws/approvals/?format=html"' in page.text
    assert "/static/django_htmx/htmx-2.min.js" in page.text
    assert "<kbd>j</kbd>" in page.text
    partial = client.get("/console/queue/", HTTP_HX_REQUEST="true")
    assert partial.text.lstrip().startswith('<div id="approval-list">')
    assert "<html" not in partial.text


def test_the_queue_costs_the_same_queries_for_many_approvals():
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client = signed_in(reviewer("ada"))

    def queries() -> int:
        with CaptureQueriesContext(connection) as context:
            assert client.get("/console/queue/").status_code == 200
        return len(context)

    waiting()
    few = queries()
    for index in range(12):
        waiting(f"update {index}")
    assert queries() == few


@pytest.mark.parametrize("rows", [10, 1000])
def test_the_queue_page_keeps_its_queries_at_10_and_1000_waiting(rows, django_assert_num_queries):
    from datetime import timedelta

    from tests.console.test_insight import recorded

    client = signed_in(reviewer("ada"))
    recorded(rows, status="pending", age=timedelta(minutes=5))
    with django_assert_num_queries(QUEUE_QUERIES):
        page = client.get("/console/queue/")
    # The seeding run waits too; past 50, a page of them.
    assert page.text.count('class="approval-row') == min(rows + 1, 50)


# Signing in (session, user, membership, reviewer, tenant); the page's approvals and their count;
# their tools; the agent and tool filters' choices, in one.
QUEUE_QUERIES = 9


def test_the_queue_counts_from_the_approvals_alone():
    """The count behind "N waiting" joins no run: at 10,000 waiting, the join was most of the
    page's time (bench W4)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    waiting()
    client = signed_in(reviewer("ada"))
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/console/queue/").status_code == 200
    counts = [query["sql"] for query in queries.captured_queries if "COUNT(" in query["sql"]]
    assert len(counts) == 1
    assert "runs_run" not in counts[0]


def test_the_filters_offer_what_waits():
    from approvals.actions.rules import check_save_rule

    check_save_rule(
        tenant=default_tenant(),
        fields={"name": "notes", "tool_pattern": "my-pack.add-order-note", "gate": "always_ask"},
        acting_user=None,
        surface="system",
    )
    waiting()
    noted = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.note-order",
        input={"orderId": "ord_1001", "text": "late"},
    )
    assert noted.status == "suspended"
    page = signed_in(reviewer("ada")).get("/console/queue/").text
    agents = page.split('name="agent"')[1].split("</select>")[0]
    tools = page.split('name="tool"')[1].split("</select>")[0]
    # A flow's step has no agent: it is not offered as one.
    assert agents == '><option value="">any</option><option >acme-ops.status-agent</option>'
    assert "<option >acme-ops.post-update</option>" in tools
    assert tools.count("<option ") == 3  # "any", and the two tools waiting


def test_filters():
    waiting()
    check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.check-order",
        input={"orderId": "ord_1001"},
    )
    client = signed_in(reviewer("ada"))
    assert "acme-ops.post-update</code>" in client.get("/console/queue/?agent=acme-ops.status-agent").text
    assert "Nothing waits for a decision" in client.get("/console/queue/?agent=my-pack.echo-agent").text
    assert "Nothing waits for a decision" in client.get("/console/queue/?age=older").text
    assert (
        "acme-ops.post-update</code>" in client.get("/console/queue/?age=hour&tool=acme-ops.post-update").text
    )


def test_an_approval_above_your_role_is_shown_but_cannot_be_decided():
    run = waiting()
    Approval.objects.filter(run=run).update(required_role="senior")
    client = signed_in(reviewer("ada"))
    queue = html.unescape(client.get("/console/queue/").text)
    assert "Can't decide: this approval needs a reviewer with the role 'senior' or higher" in queue
    approval = run.approvals.get()
    page = html.unescape(client.get(f"/console/approvals/{approval.pk}/").text)
    assert "You can't decide this: this approval needs a reviewer with the role 'senior'" in page
    refused = client.post(f"/console/approvals/{approval.pk}/", {"decision": "approve"})
    assert refused.status_code == 409
    assert not Decision.objects.exists()


def test_the_approval_page_shows_the_call_escaped_and_the_conversation():
    run = waiting("<script>alert('x')</script> is back")
    page = signed_in(reviewer("ada")).get(f"/console/approvals/{run.approvals.get().pk}/")
    assert page.status_code == 200
    assert "Posts a message to the public status page." in page.text
    assert "acts outside Kindgi, on external:status-page (an external side effect)" in page.text
    assert "<strong>no: it changes things</strong>" in page.text
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; is back" in page.text
    assert "<script>alert" not in page.text
    assert "override always_ask (agent code)" in page.text


def test_approve_then_the_run_page_shows_it_completed():
    run = waiting()
    client = signed_in(reviewer("ada"))
    response = client.post(
        f"/console/approvals/{run.approvals.get().pk}/", {"decision": "approve", "rationale": "ok"}
    )
    assert response.status_code == 302
    assert response["Location"] == f"/console/runs/{run.pk}/"
    page = client.get(response["Location"])
    assert 'id="run-status">completed<' in page.text
    assert "&quot;posted&quot;: true" in page.text  # JSON, not Python's repr
    assert "approved by Ada" in page.text  # the wait on the timeline says who decided
    assert len(STATUS_PAGE.posts) == 1


def test_reject_needs_a_rationale_said_on_the_page():
    run = waiting()
    client = signed_in(reviewer("ada"))
    url = f"/console/approvals/{run.approvals.get().pk}/"
    refused = client.post(url, {"decision": "reject"})
    assert refused.status_code == 400
    assert 'id="id_rationale-error">a rejection needs a rationale<' in refused.text
    assert '<details id="edit" open>' not in refused.text  # nothing to do with the arguments
    assert client.post(url, {"decision": "reject", "rationale": "Not confirmed yet"}).status_code == 302
    run.refresh_from_db()
    assert run.status == "completed"
    assert STATUS_PAGE.posts == []


def test_edited_arguments_are_checked_and_errors_sit_beside_the_field():
    run = waiting()
    client = signed_in(reviewer("ada"))
    url = f"/console/approvals/{run.approvals.get().pk}/"
    refused = client.post(url, {"decision": "approve", "arguments-shown": "yes", "arg-message": ""})
    assert refused.status_code == 400
    assert 'id="id_arg-message-error">Field required</p>' in refused.text
    refused = client.post(url, {"decision": "approve", "arguments-shown": "yes", "arg-message": "x" * 501})
    assert 'id="id_arg-message-error">String should have at most 500 characters</p>' in refused.text
    assert not Decision.objects.exists()
    assert (
        client.post(
            url, {"decision": "approve", "arguments-shown": "yes", "arg-message": "Edited."}
        ).status_code
        == 302
    )
    assert [post.message for post in STATUS_PAGE.posts] == ["Edited."]


def test_bulk_decisions_are_each_their_own_record():
    runs = [waiting(f"update {index}") for index in range(3)]
    client = signed_in(reviewer("ada"))
    ids = [str(run.approvals.get().pk) for run in runs[:2]]
    confirm = client.post("/console/approvals/bulk/", {"approval": ids, "decision": "approve"})
    assert "Approve these 2 calls?" in confirm.text  # nothing decided yet: the calls are listed first
    assert all(f'name="approval" value="{i}"' in confirm.text for i in ids)
    assert "update 0" in confirm.text
    assert "update 1" in confirm.text
    assert Decision.objects.count() == 0
    body = {"approval": ids, "decision": "approve", "confirmed": "yes"}
    response = client.post("/console/approvals/bulk/", body, follow=True)
    assert "Approved 2 approval(s)." in response.text
    assert Decision.objects.count() == 2
    assert Approval.objects.filter(status="pending").count() == 1
    refused = client.post(
        "/console/approvals/bulk/",
        {"approval": [str(runs[2].approvals.get().pk)], "decision": "reject"},
        follow=True,
    )
    assert (
        refused.text.count("A rejection needs a rationale: nothing was rejected.") == 1
    )  # once, not per row
    assert Approval.objects.filter(status="pending").count() == 1


def test_runs_list_run_page_live_part_and_cancel():
    run = waiting()
    client = signed_in(reviewer("ada"))
    listing = client.get("/console/runs/?status=suspended")
    assert str(run.pk)[:8] in listing.text
    page = client.get(f"/console/runs/{run.pk}/")
    assert f'ws-connect="/ws/runs/{run.pk}/?format=html"' in page.text
    assert '<svg class="timeline"' in page.text
    assert "Waits for a decision:</strong>" in page.text
    live = client.get(f"/console/runs/{run.pk}/live/")
    assert live.text.lstrip().startswith('<div id="run-live">')
    cancelled = client.post(f"/console/runs/{run.pk}/cancel/", follow=True)
    assert "The run was cancelled." in cancelled.text
    assert Run.objects.get(pk=run.pk).status == "cancelled"


def test_another_tenants_things_do_not_exist_here():
    run = waiting(tenant=other_tenant())
    client = signed_in(reviewer("ada"))
    assert client.get(f"/console/approvals/{run.approvals.get().pk}/").status_code == 404
    assert client.get(f"/console/runs/{run.pk}/").status_code == 404
    assert client.post(f"/console/runs/{run.pk}/cancel/").status_code == 404
    assert "Nothing waits for a decision" in client.get("/console/queue/").text


def test_forms_need_their_csrf_token():
    run = waiting()
    client = Client(enforce_csrf_checks=True)
    client.force_login(reviewer("ada"))
    response = client.post(f"/console/approvals/{run.approvals.get().pk}/", {"decision": "approve"})
    assert response.status_code == 403
    assert not Decision.objects.exists()


def test_a_flow_steps_approval_names_the_flow_and_its_step():
    from approvals.actions.rules import check_save_rule

    check_save_rule(
        tenant=default_tenant(),
        fields={"name": "notes", "tool_pattern": "my-pack.add-order-note", "gate": "always_ask"},
        acting_user=None,
        surface="system",
    )
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.note-order",
        input={"orderId": "ord_1001", "text": "Hi"},
    )
    client = signed_in(reviewer("ada"))
    assert "flow my-pack.note-order, step note" in client.get("/console/queue/").text
    page = client.get(f"/console/approvals/{run.approvals.get().pk}/").text
    assert "Flow step" in page
    assert "Arguments the flow step gives" in page
    assert "The conversation that led to it" not in page


def test_a_bulk_decision_naming_no_approval_is_a_400_page_and_decides_nothing():
    run = waiting()
    client = signed_in(reviewer("ada"))
    response = client.post("/console/approvals/bulk/", {"decision": "approve", "approval": ["abc"]})
    assert response.status_code == 400
    assert "one of them is not" in response.text
    assert run.approvals.get().status == "pending"


def test_console_pages_take_ids_in_any_case():
    run = waiting()
    client = signed_in(reviewer("ada"))
    approval = run.approvals.get()
    assert client.get(f"/console/approvals/{str(approval.pk).upper()}/").status_code == 200
    assert client.get(f"/console/runs/{str(run.pk).upper()}/").status_code == 200


def test_a_900_kib_input_makes_no_huge_page():
    # The input, the conversation and the journal all hold it; the call itself fails validation.
    huge = waiting("A long day. " * (900 * 1024 // 12))
    page = signed_in(reviewer("ada")).get(f"/console/runs/{huge.pk}/")
    assert page.status_code == 200
    assert len(page.content) < 250_000, len(page.content)  # each block is cut, and says so
    assert "more characters not shown" in page.text


def test_request_changes_sends_the_call_back_and_the_agent_posts_the_reviewers_wording():
    run = waiting("Checkout is fine")
    client = signed_in(reviewer("ada"))
    approval = run.approvals.get()
    url = f"/console/approvals/{approval.pk}/"
    page = client.get(url)
    assert 'id="request-changes"' in page.text
    refused = client.post(url, {"decision": "request_changes"})
    assert refused.status_code == 400
    # The error sits on the rationale, which takes the focus; the edit panel stays shut.
    assert 'id="id_rationale-error">a request for changes needs a note saying what to change<' in refused.text
    assert 'aria-describedby="id_rationale-error" autofocus' in refused.text
    assert '<details id="edit" open>' not in refused.text
    sent = client.post(url, {"decision": "request_changes", "rationale": "Checkout is back to normal."})
    assert sent.status_code == 302
    run.refresh_from_db()
    revised = run.approvals.get(status="pending")
    assert revised.arguments == {"message": "Checkout is back to normal."}
    assert STATUS_PAGE.posts == []
    assert "changes requested by Ada" in client.get(f"/console/runs/{run.pk}/").text
    client.post(f"/console/approvals/{revised.pk}/", {"decision": "approve"})
    run.refresh_from_db()
    assert run.output == {"reply": "Posted to the status page: Checkout is back to normal."}
    assert [post.message for post in STATUS_PAGE.posts] == ["Checkout is back to normal."]


def test_the_queue_is_oldest_first_unless_asked_and_cuts_arguments_at_a_word():
    from datetime import timedelta

    from django.utils import timezone

    older = waiting("First of all, the checkout page is back to normal for everyone")
    newer = waiting("Second.")
    Approval.objects.filter(run=older).update(created_at=timezone.now() - timedelta(minutes=5))
    client = signed_in(reviewer("ada"))
    page = client.get("/console/queue/").text
    first, second = f"approval-{older.approvals.get().pk}", f"approval-{newer.approvals.get().pk}"
    assert page.index(first) < page.index(second)
    assert "&quot;First of all, the checkout page is back to normal for…&quot;" in page
    page = client.get("/console/queue/?order=newest").text
    assert page.index(second) < page.index(first)


def test_a_flow_waiting_on_its_steps_approval_says_so_with_a_review_button():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        flow_id="acme-ops.status-flow",
        input={"userMessage": "Checkout is back."},
    )
    approval = Approval.objects.get(run__parent=run)
    page = signed_in(reviewer("ada")).get(f"/console/runs/{run.pk}/").text
    assert 'id="waiting-banner"' in page
    said = "Post &quot;Checkout is back.&quot; to the public status page"
    assert f"Waits for a decision:</strong> {said}" in page
    assert f'<a class="button primary small" href="/console/approvals/{approval.pk}/">Review</a>' in page
    assert 'id="run-output">None yet: the run has not finished.' in page
