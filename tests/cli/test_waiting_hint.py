"""A command that leaves a run waiting says on stderr what for, and where to decide it; stdout
stays the API's JSON."""

import json

import pytest

from .conftest import parsed
from .test_seed_transcripts import register, start_status_agent

pytestmark = pytest.mark.django_db(transaction=True)


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
    from kindgi.cli.client import Api
    from kindgi.cli.config import resolve

    api = Api(resolve(None, None))
    (mine,) = api.get("/approvals", {"runId": one["id"]})["items"]
    assert mine["provenanceRef"]["runId"] == one["id"]
    assert api.get("/approvals", {"runId": other["id"]})["items"][0]["provenanceRef"]["runId"] == other["id"]
    from kindgi.cli.errors import CliError

    with pytest.raises(CliError, match=r"runId.*not a UUID"):
        api.get("/approvals", {"runId": "nope"})


def test_a_server_that_ignores_run_id_does_not_make_the_hint_name_other_runs_approvals(cli, monkeypatch):
    """A server from before ``runId`` lists every pending approval of the tenant."""
    from kindgi.cli.client import Api

    register(cli)
    earlier = start_status_agent(cli, "Earlier.")
    real_get = Api.get

    def older_server(self, path, params=None):
        if path == "/approvals" and params:
            params = {key: value for key, value in params.items() if key != "runId"}
        return real_get(self, path, params)

    monkeypatch.setattr(Api, "get", older_server)
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
    from kindgi.cli.client import Api

    register(cli)
    start_status_agent(cli)
    _, listed, _ = cli("approvals", "list", "--status=pending")
    (approval,) = parsed(listed)["items"]
    real_get = Api.get

    def broken_answer(self, path, params=None):
        if path == f"/approvals/{approval['id']}":
            return {"unexpected": "shape"}
        return real_get(self, path, params)

    monkeypatch.setattr(Api, "get", broken_answer)
    code, out, err = cli("approvals", "complete", approval["id"], "--decision=approve")
    assert code == 0
    assert parsed(out)["kind"] == "terminal"
    assert "Traceback" not in err


def test_the_hint_prints_an_approvals_words_never_its_escapes(cli, monkeypatch):
    """A server of another version may send a title with an MCP tool's escapes in it."""
    from kindgi.cli.client import Api

    register(cli)
    real_get = Api.get

    def escaping_server(self, path, params=None):
        answer = real_get(self, path, params)
        if path == "/approvals":
            for approval in answer["items"]:
                approval["summary"] = "Read\x1b[2J\x1b]0;owned\x07 the\r\nfile\u202e"
        return answer

    monkeypatch.setattr(Api, "get", escaping_server)
    _, out, err = cli("runs", "start", "--agent=acme-ops.status-agent", '--input={"userMessage": "Up."}')
    assert f"kindgi: run {json.loads(out)['id']} waits for approval " in err
    assert "): Read[2J]0;owned the file\n" in err
    assert not any(char in err for char in "\x1b\x07\r\u202e")
