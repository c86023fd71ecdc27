import pytest

from runs.models import Run
from tests.factories import default_tenant

pytestmark = pytest.mark.django_db(transaction=True)


def start(api, **body):
    return api.post("/api/v1/runs", body, format="json")


def test_a_dry_run_of_check_order_completes_with_the_shipped_order(api):
    response = start(api, flowId="my-pack.check-order", input={"orderId": "ord_1001"}, dryRun=True)
    assert response.status_code == 201
    run = response.json()
    assert (run["status"], run["dryRun"], run["flowId"], run["flowVersion"]) == (
        "completed",
        True,
        "my-pack.check-order",
        "0.1.0",
    )
    assert run["output"] == {"status": "shipped", "orderId": "ord_1001", "totalCents": 4200}
    assert run["startedBy"] == "ada"
    assert set(run) >= {
        "id",
        "agentId",
        "readOnly",
        "input",
        "failureMessage",
        "parentRunId",
        "createdAt",
        "startedAt",
        "finishedAt",
        "messages",
    }


def test_a_dry_run_of_note_order_fails_with_the_exact_message(api):
    run = start(
        api,
        flowId="my-pack.note-order",
        input={"orderId": "ord_1001", "text": "Customer called"},
        dryRun=True,
    ).json()
    assert run["status"] == "failed"
    assert run["failureMessage"] == (
        'dry-run-effectful-tool: tool "my-pack.add-order-note" is not declared read-only (mutating: false), '
        "so it does not run in a dry run"
    )


def test_an_agent_turn_that_waits_returns_suspended(api):
    run = start(
        api, agentId="acme-ops.status-agent", input={"userMessage": "Checkout is back to normal."}
    ).json()
    assert (run["status"], run["flowId"], run["flowVersion"], run["agentId"]) == (
        "suspended",
        "agent.turn",
        "1.1.0",
        "acme-ops.status-agent",
    )
    assert run["messages"][0] == {"role": "user", "content": "Checkout is back to normal."}


@pytest.mark.parametrize(
    ("body", "status", "code", "errors"),
    [
        (
            {"flowId": "my-pack.check-order", "input": {}},
            400,
            "invalid_input",
            ["/input/orderId: Field required"],
        ),
        (
            {"flowId": "my-pack.check-order", "input": []},
            400,
            "invalid_input",
            ["/input: must be a JSON object"],
        ),
        ({"input": {}}, 400, "invalid_input", ["/flowId: give exactly one of flowId and agentId"]),
        (
            {"flowId": "my-pack.check-order", "agentId": "x", "input": {}},
            400,
            "invalid_input",
            ["/flowId: give exactly one of flowId and agentId"],
        ),
        ({"flowId": "my-pack.nope", "input": {}}, 404, "unknown_definition", None),
        (
            {"agentId": "acme-ops.status-agent", "input": {"userMessage": "x"}, "dryRun": "maybe"},
            400,
            "invalid_input",
            ["/dryRun: must be true or false"],
        ),
    ],
)
def test_bad_starts_say_what_is_wrong_and_create_nothing(api, body, status, code, errors):
    response = start(api, **body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code
    if errors is not None:
        assert error["details"]["errors"] == errors
    else:
        assert error["message"] == 'there is no flow "my-pack.nope"'
    assert not Run.objects.exists()


def test_malformed_json_is_a_clear_400(api):
    response = api.post("/api/v1/runs", "{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "malformed_request"


def test_the_list_is_newest_first_filtered_and_paged(api, django_assert_max_num_queries):
    for order in ("ord_1001", "ord_1002", "ord_1003"):
        start(api, flowId="my-pack.check-order", input={"orderId": order})
    start(api, agentId="acme-ops.status-agent", input={"userMessage": "Up."})
    listing = api.get("/api/v1/runs").json()
    assert [r["flowId"] for r in listing["items"]] == ["agent.turn", *["my-pack.check-order"] * 3]
    assert listing["nextCursor"] is None
    assert "messages" not in listing["items"][0]
    assert [r["status"] for r in api.get("/api/v1/runs?status=suspended").json()["items"]] == ["suspended"]
    assert len(api.get("/api/v1/runs?flowId=my-pack.check-order").json()["items"]) == 3
    assert len(api.get("/api/v1/runs?agentId=acme-ops.status-agent").json()["items"]) == 1
    first = api.get("/api/v1/runs?limit=3").json()
    second = api.get(f"/api/v1/runs?limit=3&cursor={first['nextCursor']}").json()
    assert len(first["items"]) == 3
    assert len(second["items"]) == 1
    assert second["nextCursor"] is None
    with django_assert_max_num_queries(6):
        api.get("/api/v1/runs")


def test_the_list_costs_the_same_queries_for_many_runs(api, django_assert_num_queries):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def queries() -> int:
        with CaptureQueriesContext(connection) as context:
            assert api.get("/api/v1/runs").status_code == 200
        return len(context)

    start(api, flowId="my-pack.check-order", input={"orderId": "ord_1001"})
    few = queries()
    for _ in range(12):
        start(api, flowId="my-pack.check-order", input={"orderId": "ord_1001"})
    assert queries() == few


def test_get_journal_and_cancel(api):
    flow = start(api, flowId="acme-ops.status-flow", input={"userMessage": "Up."}).json()
    assert flow["status"] == "suspended"
    assert api.get(f"/api/v1/runs/{flow['id']}").json()["status"] == "suspended"
    journal = api.get(f"/api/v1/runs/{flow['id']}/journal").json()
    waiting = [entry for entry in journal["items"] if entry["kind"] == "wait.suspended"]
    assert waiting[0]["nodeId"] == "respond"
    assert set(waiting[0]) == {"sequence", "kind", "nodeId", "time", "durationMs", "payload"}
    later = api.get(f"/api/v1/runs/{flow['id']}/journal?after=2").json()
    assert [entry["sequence"] for entry in later["items"]] == [3]
    assert later["nextCursor"] is None
    assert api.get(f"/api/v1/runs/{flow['id']}/journal?after=x").json()["error"]["details"]["errors"] == [
        "/after: must be a whole number from 0 to 2147483647"
    ]

    cancelled = api.post(f"/api/v1/runs/{flow['id']}/cancel")
    assert cancelled.json()["status"] == "cancelled"
    again = api.post(f"/api/v1/runs/{flow['id']}/cancel")
    assert again.status_code == 409
    assert again.json()["error"]["code"] == "conflict"


def test_another_tenants_runs_do_not_exist(api, outsider_api):
    run = start(api, flowId="my-pack.check-order", input={"orderId": "ord_1001"}).json()
    for path in (f"/api/v1/runs/{run['id']}", f"/api/v1/runs/{run['id']}/journal"):
        response = outsider_api.get(path)
        assert response.status_code == 404
        assert response.json()["error"]["code"] == "not_found"
    assert outsider_api.post(f"/api/v1/runs/{run['id']}/cancel").status_code == 404
    assert outsider_api.get("/api/v1/runs").json()["items"] == []
    assert Run.objects.get(pk=run["id"]).tenant == default_tenant()
