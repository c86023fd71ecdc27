import os
from pathlib import Path

import pytest
from django.db import connection
from playwright.sync_api import sync_playwright

from tests.live_server import ROOT, LiveServer, database_env

CHROMIUM = "/usr/bin/chromium"
# Where screenshots go: the test run's output folder.
OUTPUT = Path(os.environ.get("KINDGI_TEST_OUTPUT", ROOT / "test-output")) / "screenshots"


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), LiveServer(database_env(connection)) as live:
        yield live


@pytest.fixture(scope="module")
def browser():
    # Playwright's sync API runs an event loop in this thread; the tests' own ORM calls are still
    # plain synchronous code, so let Django allow them, for these tests only.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        yield from _chromium()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


def _chromium():
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(15_000)
    yield page
    context.close()


@pytest.fixture
def screenshot():
    OUTPUT.mkdir(parents=True, exist_ok=True)

    def save(page, name: str) -> Path:
        path = OUTPUT / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save
