"""`kindgi approvals complete ID ID …`: each decided on its own, each answered."""

import json

import pytest

from tests.cli.conftest import parsed

pytestmark = pytest.mark.django_db(transaction=True)


def test_several_ids_are_decided_each_on_its_own(cli):
    cli("reviewers", "register", '--spec={"role":"standard","displayName":"Ada"}')
    ids = []
    for message in ("One.", "Two."):
        code, _, _ = cli(
            "runs", "start", "--agent=acme-ops.status-agent", f'--input={{"userMessage":"{message}"}}'
        )
        assert code == 0
    listing = parsed(cli("approvals", "list", "--status=pending")[1])
    ids = [item["id"] for item in listing["items"]]
    assert len(ids) == 2
    cli("approvals", "complete", ids[0], "--decision=reject", "--rationale=no")

    code, out, err = cli("approvals", "complete", *ids, "--decision=approve", "--rationale=ok")
    assert code == 1  # one of them was refused
    results = json.loads(out)["results"]
    assert [(r["approvalId"], r["status"]) for r in results] == [(ids[0], "refused"), (ids[1], "decided")]
    assert f"kindgi: {ids[0]}: approval {ids[0]} is already rejected" in err
    assert parsed(cli("approvals", "get", ids[1])[1])["status"] == "approved"


def test_request_changes_from_the_cli_needs_a_rationale_and_sends_the_call_back(cli):
    cli("reviewers", "register", '--spec={"role":"standard","displayName":"Ada"}')
    cli("runs", "start", "--agent=acme-ops.status-agent", '--input={"userMessage":"Up."}')
    (approval_id,) = [item["id"] for item in parsed(cli("approvals", "list", "--status=pending")[1])["items"]]

    code, _, err = cli("approvals", "complete", approval_id, "--decision=request_changes")
    assert code == 1
    assert "/rationale: a request for changes needs a note saying what to change" in err

    code, out, _ = cli(
        "approvals", "complete", approval_id, "--decision=request_changes", "--rationale=Up since 10:02."
    )
    assert code == 0, out
    assert json.loads(out)["approval"]["status"] == "changes_requested"
    waiting = parsed(cli("approvals", "list", "--status=pending")[1])["items"]
    assert [item["subjectRef"]["arguments"] for item in waiting] == [{"message": "Up since 10:02."}]
