"""Every method of ``kindgi.Client`` and ``kindgi.AsyncClient``, against a live `kindgi dev`."""

import threading
import time
import uuid

import pytest

from kindgi.client import (
    ApiError,
    AuthenticationError,
    ConflictError,
    InvalidRequestError,
    NotFoundError,
    ServerUnreachableError,
    models,
)
from tests.live_server import free_port

STATUS = "acme-ops.status-agent"


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:8]}"


def test_a_run_started_read_and_its_journal(kindgi):
    run = kindgi.runs.start(flow_id="my-pack.check-order", input={"orderId": "ord_1001"}, dry_run=True)
    assert isinstance(run, models.RunDetail)
    assert (run.status, run.dry_run, run.principal, run.trigger) == ("completed", True, "admin", "person")
    assert run.output == {"status": "shipped", "orderId": "ord_1001", "totalCents": 4200}
    assert kindgi.runs.get(run.id) == run

    journal = list(kindgi.runs.journal(run.id))
    assert [entry.sequence for entry in journal] == list(range(1, len(journal) + 1))
    assert (journal[0].kind, journal[-1].kind) == ("run.started", "run.completed")
    assert [entry.sequence for entry in kindgi.runs.journal(run.id, after=2)] == [
        entry.sequence for entry in journal[2:]
    ]
    page = kindgi.runs.journal_page(run.id)
    assert (page.items, page.next_cursor) == (journal, None)


@pytest.fixture(scope="module")
def two_hundred_fifty_runs(dev):
    """Dry runs of the echo flow, which no other test starts: newest first, as lists are."""
    from kindgi import Client

    with Client(*dev) as client:
        started = [
            client.runs.start(flow_id="my-pack.echo-flow", input={"name": f"n{i}"}, dry_run=True).id
            for i in range(250)
        ]
    return started[::-1]


def test_listing_reads_every_page_of_250_runs(kindgi, two_hundred_fifty_runs):
    first = kindgi.runs.page(flow_id="my-pack.echo-flow", limit=100)
    assert (len(first.items), first.next_cursor is not None) == (100, True)
    listed = [run.id for run in kindgi.runs.list(flow_id="my-pack.echo-flow", page_size=60)]
    assert listed == two_hundred_fifty_runs
    assert all(run.status == "completed" for run in kindgi.runs.list(flow_id="my-pack.echo-flow"))
    assert next(iter(kindgi.runs.list(status="completed", agent_id="no-such-agent")), None) is None


def start_gated_turn(kindgi, message="Checkout is back to normal."):
    run = kindgi.runs.start(agent_id=STATUS, input={"userMessage": message})
    assert run.status == "suspended"
    (approval,) = kindgi.approvals.list(run_id=run.id, status="pending")
    return run, approval


def test_a_gated_turn_watched_to_its_wait_then_waited_for_while_approved(kindgi, direct):
    run, approval = start_gated_turn(kindgi)
    assert approval.subject_ref.tool_id == "acme-ops.post-update"
    assert approval.summary == 'Post "Checkout is back to normal." to the public status page'
    assert kindgi.approvals.get(approval.id) == approval

    watched = list(kindgi.runs.watch(run.id, until="suspended"))
    assert [event.entry.kind for event in watched][-1] == "wait.suspended"
    assert {event.run_id for event in watched} == {run.id}

    # Decided from elsewhere while this client waits.
    timer = threading.Timer(1.0, direct.approvals.approve, (approval.id,), {"rationale": "Confirmed"})
    timer.start()
    finished = kindgi.runs.wait(run.id, timeout=60)
    timer.join()
    assert finished.status == "completed"
    (tool,) = [message for message in finished.messages if message.role == "tool"]
    assert tool.content["posted"] is True
    decided = kindgi.approvals.get(approval.id)
    assert (decided.status, decided.decision.rationale, decided.decision.reviewer) == (
        "approved",
        "Confirmed",
        "Dev Admin",
    )


def test_waiting_ends_at_the_timeout(kindgi):
    run, _ = start_gated_turn(kindgi)
    began = time.monotonic()
    with pytest.raises(TimeoutError):
        kindgi.runs.wait(run.id, timeout=1.5)
    assert time.monotonic() - began < 15
    assert kindgi.runs.cancel(run.id).status == "cancelled"


def test_approve_reject_request_changes_and_several_at_once(kindgi):
    run, approval = start_gated_turn(kindgi)
    sent_back = kindgi.approvals.request_changes(approval.id, note="Say it shorter.")
    assert (sent_back.kind, sent_back.decision.decision) == ("terminal", "request_changes")
    (again,) = kindgi.approvals.list(run_id=run.id, status="pending")
    assert again.id != approval.id
    rejected = kindgi.approvals.reject(again.id, rationale="Not now")
    assert rejected.approval.status == "rejected"
    assert kindgi.runs.get(run.id).status == "completed"

    first, second = start_gated_turn(kindgi, "One.")[1], start_gated_turn(kindgi, "Two.")[1]
    answer = kindgi.approvals.bulk_complete([first.id, second.id, approval.id], decision="approve")
    assert [(result.approval_id, result.status) for result in answer.results] == [
        (first.id, "decided"),
        (second.id, "decided"),
        (approval.id, "refused"),
    ]
    assert answer.results[0].completion.approval.status == "approved"
    assert (answer.results[2].http_status, answer.results[2].error.code) == (409, "conflict")

    run, approval = start_gated_turn(kindgi, "Edited.")
    completion = kindgi.approvals.complete(
        approval.id, decision="approve", arguments={"message": "Edited by a person."}
    )
    assert completion.decision.arguments == {"message": "Edited by a person."}
    assert kindgi.approvals.list(status="approved") is not None


def test_cancelling_a_run_and_a_second_time(kindgi):
    run, approval = start_gated_turn(kindgi)
    assert kindgi.runs.cancel(run.id).status == "cancelled"
    assert kindgi.approvals.get(approval.id).status == "cancelled"
    with pytest.raises(ConflictError) as refused:
        kindgi.runs.cancel(run.id)
    assert (refused.value.status, refused.value.message) == (409, f"run {run.id} is already cancelled")


def test_reviewers(kindgi):
    me = kindgi.reviewers.me()
    assert (me.user, me.role, me.tenant) == ("admin", "admin", "default")
    assert "admin" in [reviewer.user for reviewer in kindgi.reviewers.list()]
    assert kindgi.reviewers.page(limit=1).items[0].user
    again = kindgi.reviewers.register(display_name="Dev Admin")
    assert (again.user, again.role, again.display_name) == ("admin", "admin", "Dev Admin")
    assert isinstance(again.note, str)
    assert kindgi.reviewers.update_me(notify="digest", digest_minutes=30).digest_minutes == 30
    assert kindgi.reviewers.update_me(notify="immediately").notify == "immediately"


def test_rules_made_changed_and_deleted(kindgi):
    name = unique("notes ask")
    rule = kindgi.rules.create(name=name, tool_pattern="my-pack.add-order-note", gate="always_ask")
    assert (rule.name, rule.gate, rule.tool_pattern) == (name, "always_ask", "my-pack.add-order-note")
    assert kindgi.rules.get(rule.id) == rule
    assert rule.id in [listed.id for listed in kindgi.rules.list()]
    assert kindgi.rules.update(rule.id, {"requiredRole": "senior"}).required_role == "senior"
    from_spec = kindgi.rules.create({"name": unique("spec"), "toolPattern": "x.*", "gate": "deny"})
    assert from_spec.gate == "deny"
    [created] = [
        entry for entry in kindgi.audit.list(action="rule.created") if entry.target.id == str(rule.id)
    ]
    assert (created.actor, created.surface) == ("admin", "api")
    heads = kindgi.audit.heads()
    assert heads.audit.sequence >= created.sequence
    assert kindgi.audit.page(limit=1).items[0].sequence == heads.audit.sequence
    for made in (rule, from_spec):
        assert kindgi.rules.delete(made.id) is None
    with pytest.raises(NotFoundError):
        kindgi.rules.get(rule.id)
    with pytest.raises(InvalidRequestError) as refused:
        kindgi.rules.create({"name": unique("typo"), "gaet": "deny"})
    assert any(error.startswith("/gaet: unknown field") for error in refused.value.errors)


def test_schedules(kindgi):
    schedule = kindgi.schedules.create(
        name=unique("orders"),
        flow_id="my-pack.check-order",
        input={"orderId": "ord_1001"},
        cron="0 9 * * 1-5",
    )
    assert (schedule.owner, schedule.enabled, schedule.next_run_at is not None) == ("admin", True, True)
    assert kindgi.schedules.get(schedule.id) == schedule
    assert schedule.id in [listed.id for listed in kindgi.schedules.list()]
    assert kindgi.schedules.update(schedule.id, {"enabled": False}).enabled is False
    assert kindgi.schedules.delete(schedule.id) is None
    with pytest.raises(NotFoundError):
        kindgi.schedules.get(schedule.id)
    assert kindgi.schedules.page().next_cursor is None


def test_grants_given_and_revoked(kindgi):
    grant = kindgi.grants.create(
        tool_pattern="acme-ops.post-update",
        scope="principal",
        principal="admin",
        max_calls=2,
        for_seconds=600,
    )
    assert (grant.granter, grant.max_calls, grant.uses, grant.status) == ("admin", 2, 0, "active")
    assert grant.id in [listed.id for listed in kindgi.grants.list()]
    assert kindgi.grants.page().items
    assert kindgi.grants.revoke(grant.id).status == "revoked"


def test_the_catalog(kindgi):
    tools = {tool.id: tool for tool in kindgi.catalog.tools()}
    assert tools["my-pack.lookup-order"].read_only is True
    assert kindgi.catalog.tool("my-pack.lookup-order").effects[0].kind == "reads"
    assert kindgi.catalog.tools_page(limit=1).next_cursor is not None
    assert STATUS in [agent.id for agent in kindgi.catalog.agents()]
    assert kindgi.catalog.agent(STATUS).tools[0].id == "acme-ops.post-update"
    assert kindgi.catalog.agents_page().items
    assert "my-pack.check-order" in [flow.id for flow in kindgi.catalog.flows()]
    assert [node.id for node in kindgi.catalog.flow("my-pack.check-order").nodes] == ["lookup"]
    assert kindgi.catalog.flows_page().items
    assert isinstance(kindgi.catalog.mcp_servers(), models.McpServerList)
    with pytest.raises(NotFoundError):
        kindgi.catalog.tool("my-pack.lookup-order", version="9.9.9")


def test_connections(kindgi):
    assert isinstance(kindgi.connections.apps(), models.AppList)
    assert kindgi.connections.list().items == []
    with pytest.raises(ApiError) as refused:
        kindgi.connections.connect("no-such-app")
    assert refused.value.status in (400, 404)
    assert "no-such-app" in refused.value.message
    with pytest.raises(NotFoundError):
        kindgi.connections.get(str(uuid.uuid4()))
    with pytest.raises(NotFoundError):
        kindgi.connections.remove(str(uuid.uuid4()))


def test_errors_carry_the_apis_code_message_and_details(kindgi, connect, dev):
    with pytest.raises(NotFoundError) as missing:
        kindgi.runs.get("00000000-0000-0000-0000-000000000000")
    assert (missing.value.status, missing.value.code) == (404, "not_found")
    assert missing.value.message == "there is no run 00000000-0000-0000-0000-000000000000"

    with pytest.raises(InvalidRequestError) as invalid:
        kindgi.runs.start(flow_id="my-pack.check-order", input={"order": "ord_1001"})
    assert invalid.value.code == "invalid_input"
    assert invalid.value.errors == [
        "/input/orderId: Field required",
        "/input/order: unknown field (the fields are: orderId)",
    ]
    assert invalid.value.details["fields"]["input/orderId"] == "Field required"

    with pytest.raises(AuthenticationError) as refused:
        connect(dev[0], "kgi_deadbeef_nope").runs.page()
    assert refused.value.message == "the API token is not valid, or it was revoked"

    with pytest.raises(ServerUnreachableError) as unreachable:
        connect(f"http://127.0.0.1:{free_port()}", dev[1], retries=1, backoff=0.01).runs.page()
    assert "cannot reach the Kindgi server" in str(unreachable.value)


def test_an_idempotency_key_given_starts_one_run(kindgi):
    key = str(uuid.uuid4())
    first = kindgi.runs.start(
        flow_id="my-pack.check-order", input={"orderId": "ord_1001"}, idempotency_key=key
    )
    again = kindgi.runs.start(
        flow_id="my-pack.check-order", input={"orderId": "ord_1001"}, idempotency_key=key
    )
    assert again.id == first.id
    with pytest.raises(ConflictError) as conflict:
        kindgi.runs.start(flow_id="my-pack.check-order", input={"orderId": "ord_1002"}, idempotency_key=key)
    assert key in conflict.value.message


def test_the_client_finds_the_server_in_the_environment(monkeypatch, dev, tmp_path):
    from kindgi import Client

    monkeypatch.setenv("KINDGI_CONFIG", str(tmp_path / "none.json"))
    monkeypatch.setenv("KINDGI_URL", dev[0])
    monkeypatch.setenv("KINDGI_TOKEN", dev[1])
    with Client() as client:
        assert client.url == dev[0]
        assert client.reviewers.me().user == "admin"
