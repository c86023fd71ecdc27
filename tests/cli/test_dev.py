"""`kindgi dev`: one command to a server that the next `kindgi` command uses with no flags."""

import contextlib
import json
import os
import re
import signal
import smtplib
import stat
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from tests.dev_server import KINDGI, dev_env, start_dev
from tests.live_server import ROOT, free_port


def test_kindgi_dev_serves_and_saves_a_working_token(tmp_path):
    port, mail_port = free_port(), free_port()
    config = tmp_path / "config" / "kindgi.json"
    env = dev_env(tmp_path, KINDGI_CONFIG=str(config))
    server = start_dev(env, port, "--mail-port", str(mail_port))
    try:
        assert stat.S_IMODE(config.stat().st_mode) == 0o600
        saved = json.loads(config.read_text())
        assert saved["url"] == f"http://127.0.0.1:{port}"
        assert saved["token"].startswith("kgi_")

        # The banner names where everything is, and each address it names answers.
        said = Path(env["KINDGI_SQLITE_PATH"]).with_suffix(".log").read_text()
        base = f"http://127.0.0.1:{port}"
        for label, path in [
            ("console", "/console/"),
            ("sign in", "/console/login/"),
            ("admin", "/admin/"),
            ("API docs", "/api/docs/"),
        ]:
            assert re.search(rf"^  {label} +{re.escape(base + path)}(\s|$)", said, re.M), said
            assert httpx.get(f"{base}{path}", follow_redirects=True, timeout=30).status_code == 200, path
        assert f"smtp://127.0.0.1:{mail_port}" in said
        assert "Sign in at /console/login/ as 'admin'" in said

        result = subprocess.run(
            [*KINDGI, "tools", "list"], env=env, capture_output=True, text=True, timeout=60
        )
        assert result.returncode == 0, result.stderr
        assert "my-pack.lookup-order" in result.stdout
        result = subprocess.run(
            [*KINDGI, "reviewers", "me"], env=env, capture_output=True, text=True, timeout=60
        )
        assert json.loads(result.stdout)["user"] == "admin"

        # Beside the web server, the SMTP receiver: there is no mailbox nobody@nowhere.test.
        smtp = _connect_smtp(mail_port)
        with smtp, pytest.raises(smtplib.SMTPRecipientsRefused) as refused:
            smtp.sendmail("bob@example.com", ["nobody@nowhere.test"], b"Subject: hi\r\n\r\nhi")
        assert refused.value.recipients["nobody@nowhere.test"] == (550, b"5.1.1 no such mailbox here")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)


def _connect_smtp(port: int) -> smtplib.SMTP:
    deadline = time.monotonic() + 30
    while True:
        try:
            return smtplib.SMTP("127.0.0.1", port, timeout=30)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_kindgi_devs_own_sweeper_expires_an_approval_with_no_command_run(tmp_path):
    """A one-second TTL and sweeps every second: the approval expires and its run goes on."""
    env = dev_env(tmp_path, KINDGI_APPROVAL_TTL_SECONDS="1", KINDGI_SWEEP_SECONDS="1")
    server = start_dev(env, free_port(), "--mail-port", "0")
    try:
        started = subprocess.run(
            [*KINDGI, "runs", "start", "--agent=acme-ops.status-agent", '--input={"userMessage": "Up."}'],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        run = json.loads(started.stdout)
        assert run["status"] == "suspended", started.stdout + started.stderr
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            shown = subprocess.run(
                [*KINDGI, "runs", "get", run["id"]], env=env, capture_output=True, text=True, timeout=60
            )
            run = json.loads(shown.stdout)
            if run["status"] in ("completed", "failed", "cancelled"):
                break
            time.sleep(0.5)
        assert run["status"] == "completed"
        assert run["output"]["reply"] == "Nothing was posted: a reviewer rejected it (expired)."
        listed = subprocess.run(
            [*KINDGI, "approvals", "list"], env=env, capture_output=True, text=True, timeout=60
        )
        assert [item["status"] for item in json.loads(listed.stdout)["items"]] == ["expired"]
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)


@pytest.mark.parametrize("taken", ["web", "mail"])
def test_a_taken_port_is_one_clear_line_and_nothing_starts(tmp_path, taken):
    import socket

    port, mail_port = free_port(), free_port()
    env = dev_env(tmp_path)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", port if taken == "web" else mail_port))
        holder.listen()
        result = subprocess.run(
            [*KINDGI, "dev", "--port", str(port), "--mail-port", str(mail_port)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 1
    variable, option, number = (
        ("PORT", "--port", port) if taken == "web" else ("MAIL_PORT", "--mail-port", mail_port)
    )
    assert result.stderr.count("\n") == 1, result.stderr  # one line, no traceback
    assert f"port {number} on 127.0.0.1" in result.stderr
    assert f"choose another with {variable}=… (make run) or {option}" in result.stderr
    assert not Path(env["KINDGI_SQLITE_PATH"]).exists()  # nothing started half-way: not even migrate


def _children(pid: int) -> set[int]:
    """The processes whose parent is ``pid``, read from /proc."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            # "pid (name) state ppid …": the name may hold spaces and parentheses.
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_until_gone(pids: set[int], seconds: float = 20) -> set[int]:
    deadline = time.monotonic() + seconds
    while (left := {pid for pid in pids if _alive(pid)}) and time.monotonic() < deadline:
        time.sleep(0.2)
    return left


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc")
@pytest.mark.parametrize(
    ("how", "with_pack"), [("SIGTERM", False), ("SIGTERM", True), ("SIGINT", False), ("SIGKILL", True)]
)
def test_stopping_kindgi_dev_stops_every_process_it_started(tmp_path, how, with_pack):
    """Signalled alone (not its process group, as a service manager or `kill PID` does), `kindgi
    dev` stops the web server, the sweeper and the SMTP receiver; killed outright, they die too."""
    port = free_port()
    env = dev_env(tmp_path)
    flags = ["--mail-port", str(free_port())]
    if with_pack:
        subprocess.run(
            [*KINDGI, "init", "shop", "--dir", str(tmp_path)], env=env, check=True, capture_output=True
        )
        flags += ["--pack", str(tmp_path / "shop")]
        # Beside the pack, folders named as Kindgi's packages: a checkout cloned as kindgi, say.
        # Started from there too.
        for beside in ("kindgi", "tools"):
            (tmp_path / beside).mkdir()
    server = start_dev(env, port, *flags, cwd=tmp_path if with_pack else ROOT)
    try:
        deadline = time.monotonic() + 30
        while len(started := _children(server.pid)) < 3 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(started) == 3, started  # the web server, the sweeper, the SMTP receiver
        os.kill(server.pid, getattr(signal, how))
        server.wait(timeout=30)
        assert _wait_until_gone(started) == set()
        if how != "SIGKILL":
            assert server.returncode == 0
        with pytest.raises(httpx.HTTPError):
            httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=2)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)  # whatever is left of its group, if anything
