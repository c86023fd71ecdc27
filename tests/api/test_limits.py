"""Oversized and deeply nested input is refused with a clear error, and changes nothing."""

import json

import pytest
from django.test import override_settings

from approvals.actions.decisions import check_complete_approval
from approvals.exceptions import ApprovalInputError
from approvals.models import Approval, Decision
from runs.models import JournalEntry, Run

pytestmark = pytest.mark.django_db


def post_raw(api, path: str, body: str):
    return api.generic("POST", path, body, content_type="application/json")


def nothing_written() -> tuple[int, int, int]:
    return Run.objects.count(), JournalEntry.objects.count(), Decision.objects.count()


def test_a_body_over_the_limit_is_refused_before_anything_runs(api):
    body = json.dumps({"agentId": "acme-ops.status-agent", "input": {"userMessage": "x" * 2000}})
    with override_settings(KINDGI_MAX_REQUEST_BYTES=1000):
        response = post_raw(api, "/api/v1/runs", body)
    assert response.status_code == 413
    assert response.json()["error"] == {
        "code": "too_large",
        "message": "the request body is larger than the limit of 1000 bytes",
        "details": {},
    }
    assert nothing_written() == (0, 0, 0)


def test_a_body_under_the_limit_is_read(api):
    body = json.dumps({"agentId": "acme-ops.status-agent", "input": {"userMessage": "x" * 500}})
    with override_settings(KINDGI_MAX_REQUEST_BYTES=1000):
        assert post_raw(api, "/api/v1/runs", body).status_code == 201


def test_json_nested_past_the_parser_is_refused_not_crashed(api):
    response = post_raw(api, "/api/v1/runs", "[" * 100_000 + "]" * 100_000)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_request"
    assert response.json()["error"]["message"] == "the JSON is nested too deeply"
    assert nothing_written() == (0, 0, 0)


def test_json_nested_past_the_limit_is_refused(api):
    nested: dict = {"leaf": 1}
    for _ in range(40):
        nested = {"deeper": nested}
    body = json.dumps({"agentId": "acme-ops.status-agent", "input": {"userMessage": "hi", "extra": nested}})
    response = post_raw(api, "/api/v1/runs", body)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "the JSON is nested more than 32 levels deep"
    assert nothing_written() == (0, 0, 0)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"agentId": ', "the body is not valid JSON: Expecting value: line 1 column 13 (char 12)"),
        (
            '{"input": NaN}',
            "the body is not valid JSON: Out of range float values are not JSON compliant: 'NaN'",
        ),
    ],
)
def test_malformed_json_says_what_is_wrong(api, body, message):
    response = post_raw(api, "/api/v1/runs", body)
    assert response.status_code == 400
    assert response.json()["error"] == {"code": "malformed_request", "message": message, "details": {}}


@pytest.mark.django_db(transaction=True)
def test_edited_arguments_nested_too_deep_are_refused_and_the_approval_stays_pending(api, ada):
    started = api.post(
        "/api/v1/runs", {"agentId": "acme-ops.status-agent", "input": {"userMessage": "Up."}}, format="json"
    )
    assert started.json()["status"] == "suspended"
    approval = Approval.objects.get()
    nested: list = ["leaf"]
    for _ in range(31):
        nested = [nested]
    # Within the body's limit, beyond the arguments' (the console's form sends arguments as well).
    with pytest.raises(ApprovalInputError) as refused:
        check_complete_approval(
            approval_id=approval.pk, acting_user=ada, decision="approve", arguments={"message": nested}
        )
    assert refused.value.errors == ["/arguments: the arguments nest more than 32 levels deep"]
    approval.refresh_from_db()
    assert approval.status == "pending"
    assert Decision.objects.count() == 0
    assert Run.objects.get().status == "suspended"


@pytest.mark.parametrize(
    ("query", "message"),
    [
        (
            "/api/v1/runs?status=finished",
            "/status: 'finished' is not one of: queued, running, suspended, completed, failed, cancelled",
        ),
        (
            "/api/v1/approvals?status=all",
            "/status: 'all' is not one of: pending, approved, rejected, changes_requested, expired, "
            "cancelled",
        ),
        ("/api/v1/runs?limit=many", "/limit: must be a whole number from 1 to 200, not 'many'"),
        ("/api/v1/approvals?limit=0", "/limit: must be a whole number from 1 to 200, not '0'"),
        ("/api/v1/tools?limit=201", "/limit: must be a whole number from 1 to 200, not '201'"),
    ],
)
def test_bad_query_parameters_say_what_is_wrong(api, query, message):
    response = api.get(query)
    assert response.status_code == 400
    assert response.json()["error"]["message"] == message


@pytest.mark.parametrize("flag", ["dryRun", "readOnly"])
@pytest.mark.parametrize("value", [1, "yes", "true", None])
def test_flags_are_true_or_false_and_nothing_else(api, flag, value):
    body = {"flowId": "my-pack.check-order", "input": {"orderId": "ord_1001"}, flag: value}
    response = api.post("/api/v1/runs", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["message"] in (
        f"/{flag}: must be true or false",
        f"/{flag}: This field may not be null.",
    )
    assert nothing_written() == (0, 0, 0)


@pytest.mark.parametrize("query", ["/api/v1/runs?status=", "/api/v1/approvals?limit="])
def test_an_empty_parameter_is_not_taken_for_a_missing_one(api, query):
    assert api.get(query).status_code == 400


def test_a_nul_character_is_refused_before_it_reaches_the_database(api):
    body = '{"flowId": "my-pack.check-order", "input": {"orderId": "ord_\\u0000"}}'
    response = post_raw(api, "/api/v1/runs", body)
    assert response.status_code == 400
    assert (
        response.json()["error"]["message"]
        == "the JSON holds a NUL character (\\u0000), which cannot be stored"
    )
    assert nothing_written() == (0, 0, 0)
