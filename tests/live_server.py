"""A real daphne process serving the test database, for tests that talk HTTP and WebSocket."""

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


class LiveServer:
    """``environment`` adds to (and overrides) this process's; the sample packs unless it names others."""

    def __init__(self, environment: dict[str, str]):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._env = os.environ | {"KINDGI_PACKS": "packs.my_pack,packs.acme_ops"} | environment
        self._process: subprocess.Popen | None = None

    def __enter__(self) -> "LiveServer":
        # A file, not a pipe: a pipe nobody reads would stall a server that logs a lot.
        self._stderr = tempfile.TemporaryFile()
        self._process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "daphne",
                "-b",
                "127.0.0.1",
                "-p",
                str(self.port),
                "kindgi_site.asgi:application",
            ],
            cwd=ROOT,
            env=self._env,
            stdout=subprocess.DEVNULL,
            stderr=self._stderr,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                httpx.get(f"{self.url}/api/schema/", timeout=1)
                return self
            except httpx.HTTPError:
                if self._process.poll() is not None:
                    raise RuntimeError(f"daphne exited: {self.stderr()[-2000:]}") from None
                time.sleep(0.2)
        raise RuntimeError("daphne did not start within 30 seconds")

    def __exit__(self, *exc) -> None:
        self._process.terminate()
        self._process.wait(timeout=10)
        self._stderr.close()

    def stderr(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")


def database_env(connection) -> dict[str, str]:
    """Point another process at the database this test process created."""
    database = connection.settings_dict
    if connection.vendor == "sqlite":
        return {"KINDGI_SQLITE_PATH": database["NAME"]}
    credentials = database["USER"] + (f":{database['PASSWORD']}" if database["PASSWORD"] else "")
    return {
        "DATABASE_URL": f"postgresql://{credentials}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
    }
