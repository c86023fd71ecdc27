"""Processes a workload starts: a daphne web process and db_worker workers, on the benchmark's
database (they inherit this process's environment)."""

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def daphne_command(port: int) -> list[str]:
    """Daphne as ``kindgi serve`` starts it (``kindgi_site.web``: its access log scrubbed)."""
    return [
        sys.executable,
        "-m",
        "kindgi_site.web",
        "-b",
        "127.0.0.1",
        "-p",
        str(port),
        "kindgi_site.asgi:application",
    ]


class Daphne:
    """One daphne process serving HTTP and WebSockets on a free port of 127.0.0.1, with this
    process's environment and ``environment`` over it; ready once /healthz answers."""

    def __init__(self, environment: dict[str, str] | None = None):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._env = os.environ | (environment or {})

    def __enter__(self) -> "Daphne":
        self._log, self._access = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            self.command(),
            cwd=ROOT,
            env=self._env,
            stdout=self._access,
            stderr=self._log,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{self.url}/healthz", timeout=1)
                return self
            except httpx.HTTPError:
                if self._process.poll() is not None:
                    raise RuntimeError(f"daphne exited: {self.stderr()[-2000:]}") from None
                time.sleep(0.1)
        raise RuntimeError("daphne did not start within 30 seconds")

    @property
    def pid(self) -> int:
        return self._process.pid

    def __exit__(self, *exc) -> None:
        self._process.terminate()
        self._process.wait(timeout=10)
        self._log.close()
        self._access.close()

    def command(self) -> list[str]:
        return daphne_command(self.port)

    def stderr(self) -> str:
        """What the process has written to standard error (a file, so it can never fill up)."""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def access_log(self) -> str:
        """Its access log: a line a request, on standard output."""
        self._access.seek(0)
        return self._access.read().decode(errors="replace")


class Workers:
    """``count`` worker processes polling the database queue: django-tasks-db's ``db_worker``
    every ``interval`` seconds, or Kindgi's ``run_worker`` (woken by a queued task on
    PostgreSQL), with its own default interval unless one is given."""

    def __init__(self, count: int, *, command: str = "db_worker", interval: float | None = 0.02):
        self.count, self.command, self.interval = count, command, interval

    @property
    def pids(self) -> list[int]:
        return [process.pid for process in self._processes]

    def __enter__(self) -> "Workers":
        command = [sys.executable, "manage.py", self.command]
        if self.command != "run_queue_worker":  # RQ's and Celery's own workers: neither option
            command += ["--no-reload", "--no-startup-delay"]
        if self.interval is not None:
            command += ["--interval", str(self.interval)]
        self._logs = [tempfile.TemporaryFile() for _ in range(self.count)]  # noqa: SIM115 (closed in __exit__)
        self._processes = [
            subprocess.Popen(
                [*command, "--verbosity", "0"],
                cwd=ROOT,
                env=os.environ,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            for log in self._logs
        ]
        return self

    def __exit__(self, *exc) -> None:
        for process in self._processes:
            process.terminate()
        for process, log in zip(self._processes, self._logs, strict=True):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                # Said, and ended: the figures were taken before the workers were asked to stop.
                log.seek(0)
                said = log.read().decode(errors="replace")[-3000:]
                print(
                    f"a worker did not stop within 30 s of SIGTERM; killed. Its last words:\n{said}",
                    file=sys.stderr,
                )
                process.kill()
                process.wait()
            log.close()
