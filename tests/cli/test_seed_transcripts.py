"""Every command of both Kindgi seeds, in order, against a live server."""

import json

import pytest

from .conftest import parsed

pytestmark = pytest.mark.django_db(transaction=True)


def test_mark_a_tool_read_only(cli):
    code, out, _ = cli(
        "runs", "start", "--flow=my-pack.check-order", '--input={"orderId":"ord_1001"}', "--dry-run"
    )
    run = parsed(out)
    assert (code, run["status"], run["dryRun"]) == (0, "completed", True)
    assert run["output"] == {"status": "shipped", "orderId": "ord_1001", "totalCents": 4200}

    code, out, _ = cli(
        "runs",
        "start",
        "--flow=my-pack.note-order",
        '--input={"orderId":"ord_1001","text":"Customer called"}',
        "--dry-run",
    )
    run = parsed(out)
    assert (code, run["status"], run["dryRun"]) == (1, "failed", True)
    assert run["failureMessage"] == (
        'dry-run-effectful-tool: tool "my-pack.add-order-note" is not declared read-only (mutating: false), '
        "so it does not run in a dry run"
    )
    assert '"failureMessage": "dry-run-effectful-tool: tool \\"my-pack.add-order-note\\"' in out

    code, out, _ = cli("runs", "start", "--flow=my-pack.echo-flow", '--input={"name":"Ada"}', "--dry-run")
    run = parsed(out)
    assert (code, run["status"], run["dryRun"]) == (0, "completed", True)
    assert run["output"] == {"reply": "[dry-run: model call skipped]", "greeting": "Hello, Ada!"}


def register(cli):
    code, out, _ = cli("reviewers", "register", '--spec={"role":"standard","displayName":"Ada Lovelace"}')
    assert code == 0
    return parsed(out)


def start_status_agent(cli, message="Checkout is back to normal."):
    code, out, _ = cli(
        "runs", "start", "--agent=acme-ops.status-agent", f"--input={json.dumps({'userMessage': message})}"
    )
    assert code == 0
    return parsed(out)


def test_ask_before_a_tool_runs_approve(cli):
    assert register(cli)["displayName"] == "Ada Lovelace"
    run = start_status_agent(cli)
    assert (run["flowId"], run["flowVersion"], run["status"]) == ("agent.turn", "1.1.0", "suspended")

    code, out, _ = cli("approvals", "list", "--status=pending")
    [approval] = parsed(out)["items"]
    assert approval["subjectKind"] == "tool-call:pending"
    assert approval["subjectRef"]["toolId"] == "acme-ops.post-update"
    assert approval["subjectRef"]["agentId"] == "acme-ops.status-agent"
    assert approval["subjectRef"]["arguments"] == {"message": "Checkout is back to normal."}
    assert (approval["requiredRole"], approval["status"], approval["title"]) == (
        "standard",
        "pending",
        "HITL review: acme-ops.post-update",
    )
    assert approval["provenanceRef"] == {"runId": run["id"]}

    code, out, _ = cli(
        "approvals",
        "complete",
        approval["id"],
        "--decision=approve",
        "--rationale=Confirmed with the on-call engineer",
    )
    completion = parsed(out)
    assert (code, completion["kind"], completion["waitpointResolved"]) == (0, "terminal", True)
    assert completion["approval"]["status"] == "approved"
    assert {k: completion["decision"][k] for k in ("decision", "rationale", "reviewerRoleAtDecision")} == {
        "decision": "approve",
        "rationale": "Confirmed with the on-call engineer",
        "reviewerRoleAtDecision": "standard",
    }

    code, out, _ = cli("runs", "get", run["id"])
    finished = parsed(out)
    assert finished["status"] == "completed"
    tool = next(message for message in finished["messages"] if message["role"] == "tool")
    assert tool["content"]["posted"] is True
    assert tool["content"]["postedAt"].endswith("Z")


def test_ask_before_a_tool_runs_reject(cli):
    register(cli)
    run = start_status_agent(cli)
    approval = parsed(cli("approvals", "list", "--status=pending")[1])["items"][0]
    cli("approvals", "complete", approval["id"], "--decision=reject", "--rationale=Not confirmed yet")
    finished = parsed(cli("runs", "get", run["id"])[1])
    assert finished["status"] == "completed"
    tool = next(message for message in finished["messages"] if message["role"] == "tool")
    assert tool["content"] == {"status": "rejected", "rationale": "Not confirmed yet"}


def test_in_a_flow(cli):
    register(cli)
    _, out, _ = cli(
        "runs",
        "start",
        "--flow=acme-ops.status-flow",
        '--input={"userMessage":"Checkout is back to normal."}',
    )
    flow = parsed(out)
    assert flow["status"] == "suspended"
    _, out, _ = cli("runs", "journal", flow["id"])
    [waiting] = [entry for entry in parsed(out) if entry["kind"] == "wait.suspended"]
    assert waiting["nodeId"] == "respond"
    approval = parsed(cli("approvals", "list", "--status=pending")[1])["items"][0]
    assert approval["provenanceRef"]["runId"] != flow["id"]
    child = parsed(cli("runs", "get", approval["provenanceRef"]["runId"])[1])
    assert child["parentRunId"] == flow["id"]
    cli("approvals", "complete", approval["id"], "--decision=approve")
    finished = parsed(cli("runs", "get", flow["id"])[1])
    assert (finished["status"], finished["output"]) == (
        "completed",
        {"reply": "Posted to the status page: Checkout is back to normal."},
    )


def test_watch_streams_the_journal_until_the_run_waits_then_until_it_completes(cli):
    register(cli)
    flow = parsed(cli("runs", "start", "--flow=acme-ops.status-flow", '--input={"userMessage":"Up."}')[1])
    code, out, err = cli("runs", "watch", flow["id"])
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    assert [(entry["sequence"], entry["kind"]) for entry in lines if entry["runId"] == flow["id"]] == [
        (1, "run.started"),
        (2, "node.started"),
        (3, "wait.suspended"),
    ]
    assert any(entry["kind"] == "model.called" for entry in lines if entry["runId"] != flow["id"])
    assert f"run {flow['id']} is suspended" in err

    approval = parsed(cli("approvals", "list", "--status=pending")[1])["items"][0]
    cli("approvals", "complete", approval["id"], "--decision=approve")
    code, out, err = cli("runs", "watch", flow["id"])
    kinds = [json.loads(line)["kind"] for line in out.splitlines() if json.loads(line)["runId"] == flow["id"]]
    assert kinds[-1] == "run.completed"
    assert (code, err.strip().splitlines()[-1]) == (0, f"run {flow['id']} is completed")


def test_lists_as_tables(cli):
    cli("runs", "start", "--flow=my-pack.check-order", '--input={"orderId":"ord_1001"}')
    _, out, _ = cli("runs", "list", "--output=table")
    assert out.splitlines()[0].split() == ["id", "flowId", "agentId", "status", "dryRun", "createdAt"]
    assert "my-pack.check-order" in out
    _, out, _ = cli("--output=table", "tools", "list")
    assert "reads external:orders" in out
