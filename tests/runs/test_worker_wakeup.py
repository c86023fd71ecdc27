"""`run_worker`, Kindgi's worker: on PostgreSQL an idle worker is woken by a queued task at
once, however long its polling interval; elsewhere it polls as django-tasks-db's does."""

import os
import subprocess
import sys
import time

import pytest
from django.db import connection

from runs.models import Run, RunStatus
from tests.live_server import ROOT, database_env

from .decide import decide
from .helpers import start
from .test_db_worker import database_queue  # noqa: F401  (the fixture)

pytestmark = pytest.mark.django_db(transaction=True)

LONG_INTERVAL = 60  # seconds: a worker that only polled would look again long after the test


def worker_command(*options: str) -> list[str]:
    return [sys.executable, "manage.py", "run_worker", "--no-reload", "--no-startup-delay", *options]


def worker_env() -> dict[str, str]:
    return (
        os.environ
        | database_env(connection)
        | {"KINDGI_TASKS": "db", "KINDGI_PACKS": "packs.my_pack,packs.acme_ops", "KINDGI_SWEEP_SECONDS": "0"}
    )


def status_after(run: Run, *, waiting: set[str], seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        run.refresh_from_db()
        if run.status not in waiting:
            break
        time.sleep(0.05)
    return run.status


def listening_workers() -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query = %s",
            ["LISTEN kindgi_tasks"],
        )
        return cursor.fetchone()[0]


@pytest.mark.postgres
def test_an_idle_worker_is_woken_by_a_queued_run_and_by_a_decision(database_queue):  # noqa: F811
    worker = subprocess.Popen(
        worker_command("--interval", str(LONG_INTERVAL)),
        cwd=ROOT,
        env=worker_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while listening_workers() == 0:
            assert worker.poll() is None, worker.stderr.read()
            assert time.monotonic() < deadline, "the worker never listened"
            time.sleep(0.05)

        run = start("acme-ops.status-agent", "Woken up.")
        assert status_after(run, waiting={RunStatus.QUEUED, RunStatus.RUNNING}, seconds=15) == "suspended"

        run = decide(run, "call_post_update")  # its resume is queued, and the worker told
        assert status_after(run, waiting={RunStatus.QUEUED, RunStatus.RUNNING}, seconds=15) == "completed"
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def test_a_batch_executes_what_is_queued_and_ends(database_queue):  # noqa: F811
    run = start("acme-ops.status-agent", "Polled.")
    assert run.status == RunStatus.QUEUED
    result = subprocess.run(
        worker_command("--batch", "--interval", "0.05"),
        cwd=ROOT,
        env=worker_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    run.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED
