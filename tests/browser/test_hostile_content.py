"""Content from a model, a tool or a user that carries HTML and script is shown as text, never run,
and the console sends a Content-Security-Policy that forbids inline script."""

import httpx
import pytest
from playwright.sync_api import expect

from approvals.models import Approval
from tests.factories import reviewer

from .test_console_in_a_browser import decide_by_api, sign_in, start_status_run

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = (
    '<script>window.__pwned = "script"</script>'
    '<img src="x" onerror="window.__pwned = \'img\'">'
    '"><svg onload="window.__pwned = \'svg\'">'
)


@pytest.fixture
def policy_violations(page):
    """Messages the browser logs when the page breaks its own CSP (our pages must not)."""
    seen = []
    page.on(
        "console",
        lambda message: seen.append(message.text) if "Content Security Policy" in message.text else None,
    )
    return seen


def assert_shown_as_text_and_not_run(page):
    # As text on the page (inside JSON the quotes are escaped, so look for a part without any).
    assert "<script>window.__pwned = " in page.locator("main").inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img[src=x], svg[onload]").count() == 0


def test_hostile_prompt_and_arguments_are_text_in_every_view(server, page, screenshot, policy_violations):
    ada = reviewer("ada")
    run = start_status_run(server, ada, HOSTILE)
    sign_in(page, server, "ada")
    expect(page.locator("tr.approval-row")).to_have_count(1)
    assert page.evaluate("window.__pwned") is None

    approval = Approval.objects.get(run_id=run["id"])
    page.goto(f"{server.url}/console/approvals/{approval.pk}/")
    assert_shown_as_text_and_not_run(page)
    screenshot(page, "hostile-approval")

    page.goto(f"{server.url}/console/runs/{run['id']}/")
    expect(page.locator(".status")).to_contain_text("suspended")
    # The run completes while the page is open: the live update carries the same text.
    decide_by_api(server, ada, approval.pk, rationale=HOSTILE)
    expect(page.locator(".status")).to_contain_text("completed")
    assert_shown_as_text_and_not_run(page)
    screenshot(page, "hostile-run")

    page.goto(f"{server.url}/console/runs/")
    assert page.evaluate("window.__pwned") is None
    assert policy_violations == []


def test_an_injected_inline_script_is_blocked_by_the_policy(server, page, policy_violations):
    """Were anything ever left unescaped, the policy still stops inline script: prove it does."""
    reviewer("bo")
    sign_in(page, server, "bo")
    page.evaluate(
        """() => {
            const script = document.createElement("script");
            script.textContent = "window.__pwned = 'injected'";
            document.body.appendChild(script);
        }"""
    )
    assert page.evaluate("window.__pwned") is None
    assert any("script-src" in violation for violation in policy_violations)


@pytest.mark.parametrize("path", ["/console/login/", "/", "/api/docs/"])
def test_every_page_sends_the_policy(server, path):
    policy = httpx.get(f"{server.url}{path}", timeout=10).headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "'unsafe-inline'" not in policy.split("script-src")[1].split(";")[0]
    assert "frame-ancestors 'none'" in policy
