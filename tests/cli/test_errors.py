"""Each failure is one clear line on stderr and an exit code: 1 for the API or a run, 2 for usage."""

import json

import pytest

from kindgi.cli import main

from .conftest import parsed

pytestmark = pytest.mark.django_db(transaction=True)


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("kindgi:")]
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            ["runs", "start", "--flow=my-pack.check-order", '--input={"orderId": "ord_1001",}'],
            "kindgi: --input is not valid JSON: Illegal trailing comma before end of object "
            "at line 1, column 23 (character 22)",
        ),
        (
            ["runs", "start", "--flow=my-pack.check-order", "--input=[1]"],
            'kindgi: --input must be a JSON object, like \'{"name": "Ada"}\'',
        ),
        (
            ["reviewers", "register", "--spec=role=standard"],
            "kindgi: --spec is not valid JSON: Expecting value at line 1, column 1 (character 0)",
        ),
        (
            ["approvals", "complete", "x", "--decision=approve", "--arguments={"],
            "kindgi: --arguments is not valid JSON: Expecting property name enclosed in double quotes "
            "at line 1, column 2 (character 1)",
        ),
        (
            ["approvals", "complete", "x"],
            "kindgi: kindgi approvals complete: the following arguments are required: --decision",
        ),
        (
            ["runs", "start", "--input={}"],
            "kindgi: kindgi runs start: one of the arguments --flow --agent is required",
        ),
        (["runs", "frobnicate"], "kindgi: kindgi runs: argument ACTION: invalid choice: 'frobnicate'"),
    ],
)
def test_usage_errors_exit_2(arguments, message, capsys):
    assert main(arguments) == 2
    assert one_line(capsys.readouterr().err).startswith(message)


def test_an_unknown_flow(cli):
    code, out, err = cli("runs", "start", "--flow=my-pack.nope", "--input={}")
    assert (code, out) == (1, "")
    assert one_line(err) == 'kindgi: there is no flow "my-pack.nope" (404)'


def test_invalid_input_names_the_field(cli):
    code, _, err = cli("runs", "start", "--flow=my-pack.check-order", '--input={"order": "ord_1001"}')
    assert (code, one_line(err)) == (
        1,
        "kindgi: /input/orderId: Field required; /input/order: unknown field (the fields are: orderId) (400)",
    )


def test_the_server_is_not_reachable(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("KINDGI_CONFIG", str(tmp_path / "none.json"))
    code = main(["--url=http://127.0.0.1:9", "--token=kgi_x_y", "runs", "list"])
    assert code == 1
    assert one_line(capsys.readouterr().err).startswith(
        "kindgi: cannot reach the Kindgi server at http://127.0.0.1:9 (ConnectError); is it running?"
    )


def test_no_token_and_a_rejected_token(server, monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("KINDGI_CONFIG", str(tmp_path / "none.json"))
    monkeypatch.delenv("KINDGI_TOKEN", raising=False)
    assert main([f"--url={server.url}", "runs", "list"]) == 1
    assert one_line(capsys.readouterr().err) == (
        "kindgi: the server refused the request (401): "
        "no API token: run `kindgi dev`, or pass --token / set KINDGI_TOKEN"
    )
    assert main([f"--url={server.url}", "--token=kgi_deadbeef_nope", "runs", "list"]) == 1
    assert one_line(capsys.readouterr().err) == (
        "kindgi: the server refused the request (401): the API token is not valid, or it was revoked"
    )


def test_forbidden_not_found_and_conflict(cli):
    run = parsed(cli("runs", "start", "--agent=acme-ops.status-agent", '--input={"userMessage": "Up."}')[1])
    approval = parsed(cli("approvals", "list", "--status=pending")[1])["items"][0]
    code, _, err = cli("approvals", "complete", approval["id"], "--decision=approve")
    assert (code, one_line(err)) == (
        1,
        "kindgi: ada is not a reviewer; register as one to decide approvals (403)",
    )
    code, _, err = cli("approvals", "get", "00000000-0000-0000-0000-000000000000")
    assert (code, one_line(err)) == (
        1,
        "kindgi: there is no approval 00000000-0000-0000-0000-000000000000 (404)",
    )
    cli("reviewers", "register", '--spec={"role":"standard","displayName":"Ada"}')
    assert cli("approvals", "complete", approval["id"], "--decision=approve")[0] == 0
    code, _, err = cli("approvals", "complete", approval["id"], "--decision=reject", "--rationale=late")
    assert code == 1
    assert one_line(err).startswith(
        f"kindgi: approval {approval['id']} is already approved: approve by Ada at "
    )
    assert one_line(err).endswith("(409)")
    code, _, err = cli("runs", "cancel", run["id"])
    assert (code, one_line(err)) == (1, f"kindgi: run {run['id']} is already completed (409)")


def test_watching_a_run_you_may_not_see(cli):
    code, _, err = cli("runs", "watch", "00000000-0000-0000-0000-000000000000")
    assert (code, one_line(err)) == (
        1,
        "kindgi: run 00000000-0000-0000-0000-000000000000 does not exist, or you may not see it",
    )


def test_watching_with_a_token_the_server_does_not_accept(cli, monkeypatch):
    monkeypatch.setenv("KINDGI_TOKEN", "kgi_deadbeef_nope")
    code, _, err = cli("runs", "watch", "00000000-0000-0000-0000-000000000000")
    assert (code, one_line(err)) == (
        1,
        "kindgi: the server refused the stream (4401): no API token it accepts; "
        "pass --token or set KINDGI_TOKEN",
    )


def test_output_into_a_closed_pipe_exits_quietly(cli, server, monkeypatch):
    """`kindgi tools list | head -1`: the reader goes away early; no traceback, exit 0."""
    import os
    import subprocess
    import sys

    script = (
        "import os, sys\n"
        "reader, writer = os.pipe(); os.close(reader); os.dup2(writer, 1)\n"
        "from kindgi.cli import main\n"
        "sys.exit(main(['tools', 'list']))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], env=dict(os.environ), capture_output=True, text=True
    )
    assert (result.returncode, result.stderr) == (0, "")


@pytest.mark.parametrize("bad", ["..", ".", "1/../2", "x?y"])
def test_an_id_that_is_no_id_is_a_usage_error_and_nothing_is_sent(cli, bad):
    """An id holding ``/`` or ``..`` would lead to another endpoint: ``grants revoke 1/../2``
    revoked grant 2 before the client checked ids."""
    code, out, err = cli("grants", "revoke", bad)
    assert (code, out) == (2, "")
    assert one_line(err) == f"kindgi: {bad!r} is not an id: letters, digits and . _ : - only"


def test_what_the_server_says_reaches_the_terminal_without_its_escapes(cli):
    name = "Ev\x1b[2J\x1b]0;owned\x07il\u202e"
    spec = json.dumps({"role": "standard", "displayName": name})
    assert cli("reviewers", "register", f"--spec={spec}")[0] == 0
    code, out, _ = cli("reviewers", "list", "--output=table")
    assert code == 0
    assert "Ev[2J]0;ownedil" in out
    assert not any(char in out for char in "\x1b\x07\u202e")
    cli("runs", "start", "--agent=acme-ops.status-agent", '--input={"userMessage": "Up."}')
    (approval,) = parsed(cli("approvals", "list", "--status=pending")[1])["items"]
    assert cli("approvals", "complete", approval["id"], "--decision=approve")[0] == 0
    code, _, err = cli("approvals", "complete", approval["id"], "--decision=approve")
    assert code == 1
    assert "by Ev[2J]0;ownedil at" in one_line(err)
    assert not any(char in err for char in "\x1b\x07\u202e")
