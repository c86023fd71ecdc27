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
