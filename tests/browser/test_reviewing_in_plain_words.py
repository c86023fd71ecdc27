"""Reviewing as people want to, in Chromium: every console page on a phone without sideways
scrolling, light and dark (the system's, or the person's remembered choice), a skip link, the
keyboard's help on "?", the call in a sentence first, and "request changes" whose note the
model reads before its next call appears as a new approval."""

import pytest
from django.contrib.auth import get_user_model
from playwright.sync_api import expect

from approvals.actions.rules import check_save_rule
from approvals.links import issue_link
from approvals.models import Approval
from mail.models import Mailbox
from tests.browser.test_console_in_a_browser import decide_by_api, sign_in, start_status_run
from tests.factories import default_tenant, reviewer

pytestmark = pytest.mark.django_db(transaction=True)

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1440, "height": 900}
# Console routes that are no page of their own: form posts, and the pieces a page fetches.
NOT_PAGES = {
    "home",  # a redirect to the queue
    "logout",
    "approval-panel",
    "approval-step-up",
    "decision-link-step-up",
    "bulk",
    "grant-revoke",
    "run-live",
    "run-cancel",
    "connect",
    "connection-callback",
    "disconnect",
}
WIDEST = "() => Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)"
# The outermost elements that reach past the screen's right edge, to say what is too wide.
TOO_WIDE = """() => [...document.querySelectorAll("body *")]
  .filter((e) => e.getBoundingClientRect().right > innerWidth + 1)
  .filter((e) => !e.closest(".table-scroll"))
  .filter((e) => !(e.parentElement && e.parentElement.getBoundingClientRect().right > innerWidth + 1))
  .map((e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
    + (typeof e.className === "string" && e.className ? "." + e.className.split(" ").join(".") : ""))
  .slice(0, 5)"""


def console_names() -> set[str]:
    from kindgi_site.console_urls import urlpatterns

    return {pattern.name for pattern in urlpatterns}


def every_page(server, ada) -> dict[str, str]:
    """A URL of every console page, each with something on it."""
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "status posts, with a long name that a phone must wrap somewhere sensible",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "condition": '/message != ""',
            "budget": {"scope": "tenant", "maxCalls": 50},
        },
        acting_user=None,
        surface="system",
    )
    waiting = start_status_run(server, ada, "Checkout is back to normal, and payments clear again " * 3)
    decided = start_status_run(server, ada, "Search is back.")
    decided_approval = Approval.objects.get(run_id=decided["id"])
    decide_by_api(server, ada, decided_approval.pk)
    pending = Approval.objects.get(run_id=waiting["id"])
    mailbox = Mailbox.objects.create(
        tenant=default_tenant(), address="support@acme.test", owner=ada, agent_key="acme-ops.status-agent"
    )
    base = f"{server.url}/console"
    return {
        "login": f"{base}/login/",
        "queue": f"{base}/queue/",
        "approval": f"{base}/approvals/{pending.pk}/",
        "approval (decided)": f"{base}/approvals/{decided_approval.pk}/",
        "decision-link": f"{base}/decide/{issue_link(pending, ada, 'request_changes')}/",
        "notifications": f"{base}/notifications/",
        "insight": f"{base}/insight/",
        "rules": f"{base}/rules/",
        "grants": f"{base}/grants/",
        "runs": f"{base}/runs/",
        "run": f"{base}/runs/{waiting['id']}/",
        "connections": f"{base}/connections/",
        "mailboxes": f"{base}/mail/",
        "mailbox": f"{base}/mail/{mailbox.pk}/",
        "audit": f"{base}/audit/",
        "passkeys": f"{base}/passkeys/",
    }


def tenant_admin_reviewer(name="ada"):
    user = reviewer(name, role="admin")
    user.membership.is_tenant_admin = True
    user.membership.save()
    return user


def test_every_console_page_fits_a_phone_light_and_dark(server, browser, screenshot):
    ada = tenant_admin_reviewer()
    pages = every_page(server, ada)
    routes = console_names()
    assert routes - NOT_PAGES == {name.split(" ")[0] for name in pages}, (
        "a console page this test does not visit"
    )
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=PHONE, color_scheme=scheme)
        page = context.new_page()
        page.set_default_timeout(15_000)
        page.goto(pages["login"])
        assert page.evaluate(WIDEST) <= PHONE["width"]
        sign_in(page, server, "ada")
        for name, url in pages.items():
            if name == "login":
                continue
            page.goto(url)
            widest = page.evaluate(WIDEST)
            assert widest <= PHONE["width"], (
                f"{name} ({scheme}) is {widest}px wide on a phone: {page.evaluate(TOO_WIDE)}"
            )
            if name == "approval":  # the edit step, opened, fits too
                page.click("#edit summary")
                widest = page.evaluate(WIDEST)
                assert widest <= PHONE["width"], (
                    f"the edit step is {widest}px wide: {page.evaluate(TOO_WIDE)}"
                )
            if name in ("queue", "approval", "approval (decided)", "run", "rules"):
                screenshot(page, f"phone-{scheme}-{name.replace(' ', '-').strip('()')}")
        context.close()
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=DESKTOP, color_scheme=scheme)
        page = context.new_page()
        sign_in(page, server, "ada")
        for name in ("queue", "approval", "approval (decided)", "run", "rules"):
            page.goto(pages[name])
            screenshot(page, f"desktop-{scheme}-{name.replace(' ', '-').strip('()')}")
        context.close()


def background(page) -> str:
    return page.evaluate("getComputedStyle(document.documentElement).backgroundColor")


def test_dark_follows_the_system_and_the_toggle_is_remembered(server, browser):
    reviewer("ada")
    context = browser.new_context(viewport=DESKTOP, color_scheme="light")
    page = context.new_page()
    sign_in(page, server, "ada")
    light = background(page)
    toggle = page.locator("#theme-toggle")
    expect(toggle).to_have_text("Dark")
    toggle.click()
    expect(toggle).to_have_text("Light")
    dark = background(page)
    assert dark != light
    page.goto(f"{server.url}/console/runs/")  # another page, the choice kept
    assert background(page) == dark
    assert page.evaluate("document.documentElement.dataset.theme") == "dark"
    page.locator("#theme-toggle").click()
    assert background(page) == light
    context.close()

    system_dark = browser.new_context(viewport=DESKTOP, color_scheme="dark")
    page = system_dark.new_page()
    sign_in(page, server, "ada")
    assert background(page) == dark  # no choice made here: the system's
    expect(page.locator("#theme-toggle")).to_have_text("Light")
    system_dark.close()


def test_a_skip_link_and_the_keyboards_help(server, page):
    reviewer("ada")
    sign_in(page, server, "ada")
    page.keyboard.press("Tab")
    skip = page.locator("a.skip")
    expect(skip).to_be_focused()
    expect(skip).to_be_visible()
    page.keyboard.press("Enter")
    expect(page.locator("main#main")).to_be_focused()
    help = page.locator("#keys-help")
    expect(help).not_to_be_visible()
    page.keyboard.press("?")
    expect(help).to_be_visible()
    expect(help).to_contain_text("next, previous approval")
    page.keyboard.press("Escape")
    expect(help).not_to_be_visible()


def test_request_changes_in_the_console_the_models_next_call_is_a_new_approval(server, page):
    ada = reviewer("ada", role="admin")
    run = start_status_run(server, ada, "chekout back")
    sign_in(page, server, "ada")
    expect(page.locator("tr.approval-row a.summary")).to_have_text(
        'Post "chekout back" to the public status page'
    )
    page.locator("tr.approval-row a.summary").click()
    expect(page.locator("#approval-summary")).to_have_text('Post "chekout back" to the public status page')
    page.click("#request-changes")  # no note yet: the error sits on the note, which has the focus
    expect(page.locator("#id_rationale-error")).to_have_text(
        "a request for changes needs a note saying what to change"
    )
    expect(page.locator("#id_rationale")).to_be_focused()
    expect(page.locator("#edit")).not_to_have_attribute("open", "")
    page.fill("#id_rationale", "Checkout is back to normal.")
    page.click("#request-changes")
    expect(page.locator("#run-status")).to_have_text("suspended")
    banner = page.locator("#waiting-banner")
    expect(banner).to_contain_text('Post "Checkout is back to normal." to the public status page')
    expect(page.locator(".conversation")).to_contain_text("changes_requested")
    banner.locator("a", has_text="Review").click()
    expect(page.locator("#approval-summary")).to_have_text(
        'Post "Checkout is back to normal." to the public status page'
    )
    page.click("#approve")
    expect(page.locator("#run-status")).to_have_text("completed")
    first = Approval.objects.filter(run_id=run["id"]).order_by("created_at").first()
    assert first.status == "changes_requested"


def test_the_empty_queues_bulk_bar_is_hidden(server, page):
    reviewer("ada")
    sign_in(page, server, "ada")
    expect(page.locator(".empty")).to_be_visible()
    expect(page.locator(".bulk-actions")).to_be_hidden()
    assert get_user_model().objects.filter(username="ada").exists()
