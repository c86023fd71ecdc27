import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from django.test import override_settings

from connections.models import App
from tests.browser.conftest import browser  # noqa: F401  (the browser tests' Chromium, for test_over_http)
from tests.factories import default_tenant
from tests.live_server import free_port

OAUTH_SERVER = Path(__file__).resolve().parent.parent / "oauth_server.py"
# The sample packs, and the probes with a tool that acts through the test app.
PROBE_PACKS = [
    "packs.my_pack",
    "packs.acme_ops",
    "tests.pack_fixtures.probes",
    "tests.pack_fixtures.connection_probes",
]
CLIENT_SECRET = "test-client-secret"


class OAuthServer:
    def __init__(self, url: str):
        self.url = url

    def control(self, **levers) -> dict:
        if levers:
            return httpx.post(f"{self.url}/control", json=levers).json()
        return httpx.get(f"{self.url}/control").json()

    def consent(self, authorize_url: str, *, answer: str = "allow") -> str:
        """What a person does at the app: read the consent page, press a button. Returns where
        the app sends their browser back to (Kindgi's callback, with the code and the state)."""
        page = httpx.get(authorize_url)
        assert page.status_code == 200, page.text
        params = dict(parse_qs(urlsplit(authorize_url).query, keep_blank_values=True))
        form = {key: values[0] for key, values in params.items()} | {"answer": answer}
        back = httpx.post(f"{self.url}/authorize", data=form)
        assert back.status_code == 302, back.text
        return back.headers["location"]


@pytest.fixture(scope="module")
def oauth_server():
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(OAUTH_SERVER), str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            httpx.get(f"{url}/control", timeout=1)
            break
        except httpx.TransportError:
            if time.monotonic() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError("the OAuth server did not start") from None
            time.sleep(0.1)
    try:
        yield OAuthServer(url)
    finally:
        process.kill()
        process.wait()


@pytest.fixture
def tracker(oauth_server, monkeypatch):
    """The test app, the default tenant's own, its client secret in the environment."""
    monkeypatch.setenv("TRACKER_CLIENT_SECRET", CLIENT_SECRET)
    oauth_server.control(accessTokenSeconds=3600)
    return App.objects.create(
        name="tracker",
        display_name="Tracker",
        tenant=default_tenant(),
        authorize_url=f"{oauth_server.url}/authorize",
        token_url=f"{oauth_server.url}/token",
        scopes=["issues:read", "issues:write"],
        client_id="kindgi-test",
        client_secret_env="TRACKER_CLIENT_SECRET",
        api_base_url=f"{oauth_server.url}/api",
    )


@pytest.fixture
def probe_packs():
    """The probes' packs loaded and their script empty, for the tests that run the probe agent."""
    from tests.pack_fixtures.probes import SCRIPT

    SCRIPT.reset()
    with override_settings(KINDGI_PACKS=PROBE_PACKS, KINDGI_MODEL_RETRY_DELAY_SECONDS=0):
        yield
