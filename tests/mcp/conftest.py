import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from django.test import override_settings

from tests.live_server import free_port
from tests.pack_fixtures.probes import SCRIPT
from tools.mcp.catalog import do_refresh_mcp_servers
from tools.mcp.client import POOL

NOTES_SERVER = Path(__file__).resolve().parent.parent / "mcp_servers" / "notes.py"
PACKS = ["packs.my_pack", "packs.acme_ops", "tests.pack_fixtures.probes", "tests.pack_fixtures.mcp_agents"]


def stdio_server(name: str, log: Path) -> dict:
    return {"name": name, "command": [sys.executable, str(NOTES_SERVER)], "env": {"NOTES_LOG": str(log)}}


@pytest.fixture
def notes_log(tmp_path) -> Path:
    """Each write_note call appends a line here; every test gets its own server process."""
    return tmp_path / "notes.log"


@pytest.fixture
def notes(notes_log):
    """The notes server over stdio, configured for every tenant, its tools listed."""
    SCRIPT.reset()
    with override_settings(
        KINDGI_PACKS=PACKS,
        KINDGI_MCP_SERVERS=[stdio_server("notes", notes_log)],
        KINDGI_MCP_TIMEOUT_SECONDS=10,
        KINDGI_MODEL_RETRY_DELAY_SECONDS=0,
    ):
        (report,) = do_refresh_mcp_servers()
        assert report.answered, report.error
        yield report
    POOL.close()


@pytest.fixture
def http_notes(tmp_path, monkeypatch):
    """The notes server over streamable HTTP on loopback, wanting a bearer token."""
    port = free_port()
    log = tmp_path / "http-notes.log"
    env = os.environ | {"NOTES_TOKEN": "s3cret-token", "NOTES_LOG": str(log)}
    process = subprocess.Popen(
        [sys.executable, str(NOTES_SERVER), "--http", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 20
    while True:
        try:
            httpx.get(url, timeout=1)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("the HTTP notes server did not start") from None
            time.sleep(0.1)
    monkeypatch.setenv("NOTES_AUTHORIZATION", "Bearer s3cret-token")
    try:
        yield {"url": url, "log": log}
    finally:
        POOL.close()
        process.kill()
        process.wait()
