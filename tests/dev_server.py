"""`kindgi dev` itself, started for a test on a port of its own, with its own SQLite database
and its own saved token: the server a newcomer, the CLI and the Python client meet first."""

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from tests.live_server import ROOT, free_port

KINDGI = [sys.executable, "-m", "kindgi.cli"]


def dev_env(tmp_path, **more: str) -> dict[str, str]:
    env = os.environ | {
        "KINDGI_SQLITE_PATH": str(tmp_path / "dev.sqlite3"),
        "KINDGI_CONFIG": str(tmp_path / "kindgi.json"),
    }
    # Its own SQLite database, whatever database this test run uses (make test's PostgreSQL pass).
    for name in ("KINDGI_TOKEN", "KINDGI_URL", "DATABASE_URL", "REDIS_URL", "KINDGI_TASKS"):
        env.pop(name, None)
    return env | more


def start_dev(env: dict[str, str], port: int, *flags: str, cwd: Path = ROOT) -> subprocess.Popen:
    """`kindgi dev` on ``port``, once it answers HTTP (its output in a file beside its database,
    for a failure to show)."""
    log = Path(env["KINDGI_SQLITE_PATH"]).with_suffix(".log")
    with log.open("w") as output:
        server = subprocess.Popen(
            [*KINDGI, "dev", "--port", str(port), *flags],
            cwd=cwd,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/", timeout=1)
            return server
        except httpx.HTTPError:
            assert server.poll() is None, log.read_text()
            time.sleep(0.3)
    os.killpg(server.pid, signal.SIGTERM)
    raise AssertionError(f"kindgi dev did not answer on port {port}")


@dataclass(frozen=True)
class RunningDev:
    url: str
    token: str
    env: dict[str, str]

    def django(self, code: str) -> str:
        """Run ``code`` in a Django shell on the server's database, as an operator would."""
        result = subprocess.run(
            [sys.executable, "-m", "django", "shell", "-c", code],
            env=self.env | {"DJANGO_SETTINGS_MODULE": "kindgi_site.settings"},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert result.returncode == 0, result.stderr
        return result.stdout


@contextmanager
def kindgi_dev(folder: Path, **more: str):
    """A running `kindgi dev` (no SMTP receiver): its URL, the token it saved, its environment."""
    port, env = free_port(), dev_env(folder, **more)
    server = start_dev(env, port, "--mail-port", "0")
    try:
        saved = json.loads(Path(env["KINDGI_CONFIG"]).read_text())
        yield RunningDev(saved["url"], saved["token"], env)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)
