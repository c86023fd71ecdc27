"""A command that leaves a run waiting says on stderr what for, and where to decide it; stdout
stays the API's JSON."""

import json
from dataclasses import replace

import pytest

from kindgi.client import Client, InvalidRequestError
from kindgi.client.transport import Transport

from .conftest import parsed
from .test_seed_transcripts import register, start_status_agent

pytestmark = pytest.mark.django_db(transaction=True)


def answering(monkeypatch, changed):
    """The server as another version of it would answer: each operation as ``changed`` makes it
    (what it is asked, or how its answer reads) before it is sent."""
    send = Transport.send
    monkeypatch.setattr(Transport, "send", lambda self, operation: send(self, changed(operation)))


def test_starting_a_run_that_waits_names_its_approval_and_its_console_link(cli, server):
    register(cli)
    code, out, err = cli(
        "runs", "start", "--agent=acme-ops.status-agent", '--input={"userMessage": "Checkout is back."}'
    )
    run = json.loads(out)  # stdout is the run's JSON, nothing else
    assert (code, run["status"]) == (0, "suspended")
    _, listed, _ = cli("approvals", "list", "--status=pending")
    (approval,) = parsed(listed)["items"]
    assert err.splitlines() == [
        f"kindgi: run {run['id']} waits for approval {approval['id']} (a standard's): {approval['summary']}",
        f"  decide it: kindgi approvals complete {approval['id']} --decision=approve (or reject), "
        f"or open {server.url}/console/approvals/{approval['id']}/",
    ]


def test_a_run_that_does_not_wait_says_nothing_more(cli):
    code, out, err = cli("runs", "start", "--flow=my-pack.check-order", '--input={"orderId":"ord_1001"}')
    assert (code, parsed(out)["status"], err) == (0, "completed", "")


def test_a_decision_after_which_the_run_waits_again_names_the_next_approval(cli):
    register(cli)
    run = start_status_agent(cli)
    _, listed, _ = cli("approvals", "list", "--status=pending")
    (first,) = parsed(listed)["items"]
    # Asked to change, the sample agent proposes another call, which waits again.
    code, out, err = cli(
        "approvals", "complete", first["id"], "--decision=request_changes", "--rationale=Say it shorter."
    )
    assert code == 0
    assert parsed(out)["kind"] == "terminal"
    _, listed, _ = cli("approvals", "list", "--status=pending")
    (second,) = parsed(listed)["items"]
    assert second["id"] != first["id"]
    assert err.startswith(f"kindgi: run {run['id']} waits for approval {second['id']} ")

    code, out, err = cli("approvals", "complete", second["id"], "--decision=approve")
    assert (code, err) == (0, "")


def test_the_approvals_list_filters_by_run(cli):
    register(cli)
    one, other = start_status_agent(cli), start_status_agent(cli, "All good again.")
    _, out, _ = cli("approvals", "list")
    assert len(parsed(out)["items"]) == 2
    client = Client()
    (mine,) = client.approvals.page(run_id=one["id"]).items
    assert mine.provenance_ref.run_id == one["id"]
    assert client.approvals.page(run_id=other["id"]).items[0].provenance_ref.run_id == other["id"]
    with pytest.raises(InvalidRequestError, match=r"runId.*not a UUID"):
        client.approvals.page(run_id="nope")


def test_a_server_that_ignores_run_id_does_not_make_the_hint_name_other_runs_approvals(cli, monkeypatch):
    """A server from before ``runId`` lists every pending approval of the tenant."""
    register(cli)
    earlier = start_status_agent(cli, "Earlier.")

    def older_server(operation):
        if operation.path == "/approvals":
            params = {key: value for key, value in operation.params.items() if key != "runId"}
            return replace(operation, params=params)
        return operation

    answering(monkeypatch, older_server)
    _, out, err = cli("runs", "start", "--agent=acme-ops.status-agent", '--input={"userMessage": "Later."}')
    run = json.loads(out)
    assert run["id"] != earlier["id"]
    hints = [line for line in err.splitlines() if line.startswith("kindgi: run")]
    assert len(hints) == 1
    assert hints[0].startswith(f"kindgi: run {run['id']} waits for approval ")
    assert "Earlier" not in err


def test_the_hint_follows_a_run_whose_approval_the_cli_cannot_read(cli, monkeypatch):
    """The follow-up after a decision is a courtesy: whatever it meets, the decision's answer and
    exit code stand."""
    register(cli)
    start_status_agent(cli)
    _, listed, _ = cli("approvals", "list", "--status=pending")
    (approval,) = parsed(listed)["items"]

    def broken_answer(operation):
        if operation.method == "GET" and operation.path == f"/approvals/{approval['id']}":
            return replace(operation, read=lambda _body: operation.read({"unexpected": "shape"}))
        return operation

    answering(monkeypatch, broken_answer)
    code, out, err = cli("approvals", "complete", approval["id"], "--decision=approve")
    assert code == 0
    assert parsed(out)["kind"] == "terminal"
    assert "Traceback" not in err


def test_the_hint_prints_an_approvals_words_never_its_escapes(cli, monkeypatch):
    """A server of another version may send a title with an MCP tool's escapes in it."""
    register(cli)

    def escaping(body):
        for approval in body["items"]:
            approval["summary"] = "Read\x1b[2J\x1b]0;owned\x07 the\r\nfile\u202e"
        return body

    def escaping_server(operation):
        if operation.path == "/approvals":
            return replace(operation, read=lambda body: operation.read(escaping(body)))
        return operation

    answering(monkeypatch, escaping_server)
    _, out, err = cli("runs", "start", "--agent=acme-ops.status-agent", '--input={"userMessage": "Up."}')
    assert f"kindgi: run {json.loads(out)['id']} waits for approval " in err
    assert "): Read[2J]0;owned the file\n" in err
    assert not any(char in err for char in "\x1b\x07\r\u202e")
