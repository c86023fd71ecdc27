"""A worker killed mid-call: the run is taken over from its journal, and the call is not silently repeated."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import connection

from runs.actions import check_start_run, recover_stuck_runs
from runs.models import Run, RunStatus
from tests.factories import default_tenant, principal
from tests.live_server import ROOT, database_env
from tests.runs.test_db_worker import database_queue  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db(transaction=True)
LEASE_SECONDS = 2
# The workers' sessions carry this name (libpq reads PGAPPNAME), so that ending the killed one's
# ends nothing else: this process's idle pooled connections ended too would each cost the
# pool's next checkout a back-off, and its 10 s ran out.
WORKER_SESSIONS = "kindgi-test-worker"


def worker(*extra: str) -> subprocess.Popen:
    env = (
        os.environ
        | database_env(connection)
        | {
            "KINDGI_TASKS": "db",
            "KINDGI_PACKS": "packs.my_pack,packs.acme_ops,tests.pack_fixtures.probes",
            "KINDGI_RUN_LEASE_SECONDS": str(LEASE_SECONDS),
            "PGAPPNAME": WORKER_SESSIONS,
        }
    )
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "db_worker",
            "--no-reload",
            "--no-startup-delay",
            "--interval",
            "0.1",
            *extra,
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def wait_for(condition, *, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def end_sessions_of_the_dead() -> None:
    """A killed process cannot close its database sessions; on PostgreSQL, end them now (the
    workers' only: none but the killed one is running) so the test database can be dropped later."""
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND application_name = %s",
            [WORKER_SESSIONS],
        )


def _has_a_line(file: Path) -> bool:
    return file.exists() and file.read_text().endswith("\n")


def kill_mid_call(flow_id: str, side_effects: Path) -> Run:
    """Start the flow, let a worker begin its tool call, SIGKILL the worker, let its claim expire and
    have the sweep queue the run again; then a second worker handles it."""
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id=flow_id,
        input={"path": str(side_effects), "pause_ms": 60_000},
    )
    first = worker()
    try:
        # Opening the file creates it before the line is written; the side effect has happened
        # only once its line is there.
        wait_for(lambda: _has_a_line(side_effects), seconds=60, what="the tool's side effect")
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=10)
        end_sessions_of_the_dead()
    time.sleep(LEASE_SECONDS + 0.5)
    assert recover_stuck_runs().done == [run.pk]
    second = worker("--batch")
    assert second.wait(timeout=120) == 0, second.stderr.read().decode()[-2000:]
    run.refresh_from_db()
    return run


def test_a_call_to_a_tool_that_is_not_idempotent_waits_for_a_person(database_queue, tmp_path):  # noqa: F811
    side_effects = tmp_path / "effects.txt"
    run = kill_mid_call("probe.append", side_effects)
    assert run.status == RunStatus.SUSPENDED
    approval = run.approvals.get()
    assert (approval.subject_kind, approval.title) == (
        "tool-call:interrupted",
        "Interrupted call: probe.slow-append",
    )
    assert len(side_effects.read_text().splitlines()) == 1  # not repeated
    assert run.journal.filter(kind="wait.suspended", node_id="append").exists()


def test_a_call_to_an_idempotent_tool_is_repeated_with_the_same_key(database_queue, tmp_path):  # noqa: F811
    side_effects = tmp_path / "effects.txt"
    run = kill_mid_call("probe.append-idempotent", side_effects)
    assert run.status == RunStatus.COMPLETED
    keys = side_effects.read_text().splitlines()
    assert keys == [f"{run.pk}:append"] * 2
    assert run.output == {"lines": 2}
