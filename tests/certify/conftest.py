"""The certification suite: what makes a queue fit to carry Kindgi's runs, proved against each
task backend with real Redis and real worker processes (docs/operations.md, "Queues").

``make certify`` runs it once per backend (``KINDGI_CERTIFY=db|rq|celery``; all three when it is
unset), on PostgreSQL; `make test` runs it after the suite.
"""

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.db import connection

from tests.live_server import ROOT, database_env
from tests.runs.conftest import probe_packs  # noqa: F401  (the sample and probe packs, for every test here)
from tests.runs.test_db_worker import _reset_task_backends
from tests.scale.conftest import redis_server  # noqa: F401  (the fixture)

BACKENDS = ("db", "rq", "celery")
# Each backend's own Redis database, emptied before each test: the suite runs in one process.
REDIS_DATABASE = {"db": 13, "rq": 14, "celery": 15}
PACKS = "packs.my_pack,packs.acme_ops,tests.pack_fixtures.probes"
LEASE_SECONDS = 2
# The workers' database sessions carry this name (libpq reads PGAPPNAME): a killed worker's
# sessions are ended by it, and nothing else's.
WORKER_SESSIONS = "kindgi-certified-worker"


def chosen_backends() -> list[str]:
    named = [name.strip() for name in os.environ.get("KINDGI_CERTIFY", "").split(",") if name.strip()]
    unknown = sorted(set(named) - set(BACKENDS))
    if unknown:
        raise pytest.UsageError(f"KINDGI_CERTIFY names {', '.join(unknown)}: the backends are {BACKENDS}")
    return named or list(BACKENDS)


def pytest_generate_tests(metafunc):
    if "queue" in metafunc.fixturenames:
        metafunc.parametrize("queue", chosen_backends(), indirect=True)


@dataclass
class Queue:
    """One backend as the processes of a site use it: its environment, its workers, its sweepers."""

    name: str
    redis_url: str
    processes: list[subprocess.Popen] = field(default_factory=list)

    @property
    def environment(self) -> dict[str, str]:
        return database_env(connection) | {
            "KINDGI_TASKS": self.name,
            "REDIS_URL": self.redis_url,
            "KINDGI_PACKS": PACKS,
            "KINDGI_RUN_LEASE_SECONDS": str(LEASE_SECONDS),
            "PGAPPNAME": WORKER_SESSIONS,
        }

    def start(self, *arguments: str, log: Path, **extra: str) -> subprocess.Popen:
        """A `kindgi` command (worker, sweeper) in a process of its own, as an operator starts it."""
        process = subprocess.Popen(
            [sys.executable, "-m", "kindgi.cli", *arguments],
            cwd=ROOT,
            # The probe pack lives in the tests: importable from the checkout, which `kindgi`'s
            # processes (started with -P) do not put on the path themselves.
            env=os.environ | self.environment | {"PYTHONPATH": str(ROOT)} | extra,
            stdout=log.open("a"),
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    def worker(self, log: Path, **extra: str) -> subprocess.Popen:
        return self.start("worker", "--backend", self.name, log=log, **extra)

    def sweeper(self, log: Path, **extra: str) -> subprocess.Popen:
        """The sweeps in a process of their own (`kindgi sweeper`), for every backend alike."""
        return self.start("sweeper", log=log, **extra)

    def stop(self, process: subprocess.Popen) -> None:
        """As an operator stops a worker (SIGTERM): it ends its task and leaves the queue."""
        process.terminate()
        process.wait(timeout=30)

    def kill(self, process: subprocess.Popen) -> None:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        # A killed process cannot close its database sessions: end them, so that the test
        # database can be dropped later.
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND application_name = %s",
                [WORKER_SESSIONS],
            )

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@pytest.fixture
def queue(request, settings, redis_server):  # noqa: F811
    """The backend named by the test's parameter, in this process (a run started here is queued
    there) and for the processes the test starts."""
    assert connection.vendor == "postgresql", "the certification suite runs on PostgreSQL (make certify)"
    name = request.param
    url = f"redis://127.0.0.1:6379/{REDIS_DATABASE[name]}"
    import redis

    redis.Redis.from_url(url).flushdb()
    from kindgi_site.config import Environment

    environment = Environment({"KINDGI_TASKS": name, "REDIS_URL": url})
    settings.TASKS = environment.tasks()
    settings.KINDGI_TASK_QUEUE = name
    settings.KINDGI_RUN_LEASE_SECONDS = LEASE_SECONDS
    for key, value in environment.queue_settings().items():
        setattr(settings, key, value)
    if name == "celery":
        from kindgi_site.celery import app

        app.conf.broker_url = url
    _reset_task_backends()
    under_test = Queue(name, url)
    try:
        yield under_test
    finally:
        under_test.stop_all()
        settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
        _reset_task_backends()


def wait_for(condition, *, seconds: float, what: str, logs: list[Path] = ()) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            said = "\n".join(f"--- {log.name}\n{log.read_text()[-3000:]}" for log in logs if log.exists())
            pytest.fail(f"timed out waiting for {what}\n{said}")
        time.sleep(0.1)
