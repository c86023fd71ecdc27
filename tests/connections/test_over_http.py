"""Connecting an app as a person does, against a real daphne and the real OAuth server: in
Chromium through the console, and with `kindgi connections connect`, which waits for the answer."""

import os
import re
import subprocess
import sys

import httpx
import pytest
from django.db import connection as db
from playwright.sync_api import expect

from connections.models import Connection
from tenants.tokens import do_create_token
from tests.browser.conftest import OUTPUT
from tests.factories import member
from tests.live_server import ROOT, LiveServer, database_env

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "a-long-test-password"


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    environment = database_env(db) | {"TRACKER_CLIENT_SECRET": "test-client-secret"}
    with django_db_blocker.unblock(), LiveServer(environment) as live:
        yield live


def test_connecting_in_the_console_with_chromium(server, browser, tracker):
    member("ada")
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.set_default_timeout(15_000)
    page.goto(f"{server.url}/console/login/?next=/console/connections/")
    page.fill("input[name=username]", "ada")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.get_by_role("button", name="Connect Tracker").click()
    expect(page.locator("h1")).to_have_text("Allow Kindgi to use your test app?")
    page.get_by_role("button", name="Allow").click()
    expect(page.locator(".flash")).to_contain_text("Connected Tracker.")
    expect(page.locator("#connections")).to_contain_text("active")
    expect(page.locator("#connections")).to_contain_text("issues:write")
    OUTPUT.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(OUTPUT / "connections-connected.png"), full_page=True)
    connection = Connection.objects.get(owner__username="ada")
    assert connection.status == "active"

    page.get_by_role("button", name="Disconnect").click()
    expect(page.locator(".flash")).to_contain_text("Disconnected Tracker.")
    connection.refresh_from_db()
    assert connection.status == "revoked"


def test_kindgi_connections_connect_prints_the_address_and_waits_for_the_answer(
    server, tracker, oauth_server
):
    ada = member("ada")
    _, token = do_create_token(user=ada)
    environment = os.environ | {"KINDGI_URL": server.url, "KINDGI_TOKEN": token, "KINDGI_CONFIG": os.devnull}
    cli = subprocess.Popen(
        [sys.executable, "-m", "kindgi.cli", "connections", "connect", "tracker", "--wait", "60"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    address = None
    for line in cli.stderr:
        if found := re.search(r"(http://\S+/authorize\?\S+)", line):
            address = found.group(1)
            break
    assert address, "the CLI printed no address to open"

    # The person opens it: signs in to Kindgi in their browser, allows access at the app.
    with httpx.Client(base_url=server.url, follow_redirects=False) as browser_session:
        login = browser_session.get("/console/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', login.text).group(1)
        browser_session.post(
            "/console/login/",
            data={"username": "ada", "password": PASSWORD, "csrfmiddlewaretoken": csrf},
            headers={"Referer": f"{server.url}/console/login/"},
        )
        back = oauth_server.consent(address)
        assert back.startswith(f"{server.url}/console/connections/callback/")
        assert browser_session.get(back).status_code == 302

    out, err = cli.communicate(timeout=60)
    assert cli.returncode == 0, err
    assert '"status": "active"' in out
    listed = subprocess.run(
        [sys.executable, "-m", "kindgi.cli", "connections", "list", "--output", "table"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert re.search(r"tracker\s+active\s+issues:read, issues:write", listed.stdout), listed.stdout
