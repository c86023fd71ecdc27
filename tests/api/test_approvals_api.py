import pytest

from approvals.models import Approval, Decision
from packs.acme_ops.status_page import STATUS_PAGE

from .conftest import client_for

pytestmark = pytest.mark.django_db(transaction=True)


def waiting_run(api):
    return api.post(
        "/api/v1/runs",
        {"agentId": "acme-ops.status-agent", "input": {"userMessage": "Checkout is back to normal."}},
        format="json",
    ).json()


def test_the_pending_approval_has_the_seeds_shape(api):
    run = waiting_run(api)
    listing = api.get("/api/v1/approvals?status=pending").json()
    [approval] = listing["items"]
    assert approval["subjectKind"] == "tool-call:pending"
    assert approval["subjectRef"] == {
        "runId": run["id"],
        "toolId": "acme-ops.post-update",
        "toolVersion": "0.1.0",
        "agentId": "acme-ops.status-agent",
        "flowId": None,
        "nodeId": None,
        "callId": "call_post_update",
        "arguments": {"message": "Checkout is back to normal."},
    }
    assert (approval["requiredRole"], approval["status"]) == ("standard", "pending")
    assert approval["title"] == "HITL review: acme-ops.post-update"
    assert approval["provenanceRef"] == {"runId": run["id"]}
    assert api.get(f"/api/v1/approvals/{approval['id']}").json() == approval
    assert api.get("/api/v1/approvals?status=approved").json()["items"] == []


def test_approve_returns_the_terminal_completion_and_the_run_completes(api):
    run = waiting_run(api)
    approval_id = api.get("/api/v1/approvals?status=pending").json()["items"][0]["id"]
    response = api.post(
        f"/api/v1/approvals/{approval_id}/complete",
        {"decision": "approve", "rationale": "Confirmed with the on-call engineer"},
        format="json",
    )
    assert response.status_code == 200
    completion = response.json()
    assert completion["kind"] == "terminal"
    assert completion["waitpointResolved"] is True
    assert completion["approval"]["status"] == "approved"
    assert {
        k: completion["decision"][k] for k in ("decision", "rationale", "reviewerRoleAtDecision", "reviewer")
    } == {
        "decision": "approve",
        "rationale": "Confirmed with the on-call engineer",
        "reviewerRoleAtDecision": "standard",
        "reviewer": "Ada",
    }
    finished = api.get(f"/api/v1/runs/{run['id']}").json()
    assert finished["status"] == "completed"
    tool = next(m for m in finished["messages"] if m["role"] == "tool")
    assert tool["content"]["posted"] is True
    # The decided approval shows its decision wherever it is shown.
    shown = api.get(f"/api/v1/approvals/{approval_id}").json()
    assert shown["decision"] == completion["decision"]
    listed = api.get("/api/v1/approvals", {"status": "approved"}).json()["items"]
    assert [item["decision"]["reviewer"] for item in listed] == ["Ada"]


def test_reject_needs_a_rationale_and_then_completes_the_run(api):
    run = waiting_run(api)
    approval_id = Approval.objects.get().pk
    missing = api.post(f"/api/v1/approvals/{approval_id}/complete", {"decision": "reject"}, format="json")
    assert missing.status_code == 400
    assert missing.json()["error"]["details"]["errors"] == ["/rationale: a rejection needs a rationale"]
    api.post(
        f"/api/v1/approvals/{approval_id}/complete",
        {"decision": "reject", "rationale": "Not confirmed yet"},
        format="json",
    )
    finished = api.get(f"/api/v1/runs/{run['id']}").json()
    assert finished["status"] == "completed"
    assert next(m for m in finished["messages"] if m["role"] == "tool")["content"] == {
        "status": "rejected",
        "rationale": "Not confirmed yet",
    }


def test_refusals_map_to_their_statuses_and_change_nothing(api, member_api, outsider_api):
    waiting_run(api)
    approval = Approval.objects.get()
    url = f"/api/v1/approvals/{approval.pk}/complete"
    not_reviewer = member_api.post(url, {"decision": "approve"}, format="json")
    assert (not_reviewer.status_code, not_reviewer.json()["error"]["code"]) == (403, "not_a_reviewer")
    assert outsider_api.post(url, {"decision": "approve"}, format="json").status_code == 404
    assert outsider_api.get(f"/api/v1/approvals/{approval.pk}").status_code == 404
    assert outsider_api.get("/api/v1/approvals").json()["items"] == []
    Approval.objects.filter(pk=approval.pk).update(required_role="senior")
    too_low = api.post(url, {"decision": "approve"}, format="json")
    assert (too_low.status_code, too_low.json()["error"]["code"]) == (403, "forbidden")
    assert "needs a reviewer with the role 'senior'" in too_low.json()["error"]["message"]
    bad = api.post(url, {"decision": "maybe"}, format="json")
    assert bad.json()["error"]["details"]["errors"] == ['/decision: "maybe" is not a valid choice.']
    # the role is checked before anything else about the decision
    edit = api.post(url, {"decision": "approve", "arguments": {"message": ""}}, format="json")
    assert edit.status_code == 403
    assert not Decision.objects.exists()
    assert STATUS_PAGE.posts == []

    from tests.factories import reviewer

    senior = client_for(reviewer("sam", role="senior"))
    assert senior.post(url, {"decision": "approve"}, format="json").status_code == 200
    second = senior.post(url, {"decision": "reject", "rationale": "late"}, format="json")
    assert (second.status_code, second.json()["error"]["code"]) == (409, "conflict")
    assert "already approved: approve by Sam" in second.json()["error"]["message"]
    assert len(STATUS_PAGE.posts) == 1


def test_edited_arguments_are_validated_by_the_api(api):
    waiting_run(api)
    url = f"/api/v1/approvals/{Approval.objects.get().pk}/complete"
    bad = api.post(url, {"decision": "approve", "arguments": {"message": ""}}, format="json")
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["errors"] == [
        "/arguments/message: String should have at least 1 character"
    ]
    good = api.post(url, {"decision": "approve", "arguments": {"message": "Edited."}}, format="json")
    assert good.json()["decision"]["arguments"] == {"message": "Edited."}
    assert [p.message for p in STATUS_PAGE.posts] == ["Edited."]


def test_the_approval_list_costs_the_same_queries_for_many(api):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as context:
            api.get("/api/v1/approvals?status=pending")
        return len(context)

    waiting_run(api)
    few = queries()
    for _ in range(8):
        waiting_run(api)
    assert len(api.get("/api/v1/approvals?status=pending").json()["items"]) == 9
    assert queries() == few


def test_bulk_decisions_decide_each_on_its_own_and_answer_per_item(api):
    for _ in range(3):
        waiting_run(api)
    first, second, third = (a.pk for a in Approval.objects.order_by("created_at"))
    api.post(f"/api/v1/approvals/{second}/complete", {"decision": "reject", "rationale": "no"}, format="json")
    response = api.post(
        "/api/v1/approvals/decisions",
        {
            "decisions": [
                {"approvalId": str(first), "decision": "approve", "rationale": "ok"},
                {"approvalId": str(second), "decision": "approve"},  # decided already: refused
                {"approvalId": str(third), "decision": "reject", "rationale": "not today"},
            ]
        },
        format="json",
    )
    assert response.status_code == 200
    results = response.json()["results"]
    assert [(r["approvalId"], r["status"], r["httpStatus"]) for r in results] == [
        (str(first), "decided", 200),
        (str(second), "refused", 409),
        (str(third), "decided", 200),
    ]
    assert results[0]["completion"]["approval"]["status"] == "approved"
    assert results[1]["error"]["code"] == "conflict"
    assert "already rejected" in results[1]["error"]["message"]
    assert results[2]["completion"]["decision"]["rationale"] == "not today"
    assert dict(Approval.objects.values_list("pk", "status")) == {
        first: "approved",
        second: "rejected",
        third: "rejected",
    }


def test_bulk_decisions_refuse_a_malformed_list_whole(api):
    waiting_run(api)
    empty = api.post("/api/v1/approvals/decisions", {"decisions": []}, format="json")
    assert empty.status_code == 400
    typo = api.post(
        "/api/v1/approvals/decisions",
        {"decisions": [{"approvalId": str(Approval.objects.get().pk), "decison": "approve"}]},
        format="json",
    )
    assert typo.status_code == 400
    assert "decisions/0/decison" in typo.json()["error"]["details"]["fields"]
    assert Approval.objects.get().status == "pending"
