"""A standing grant in Chromium: approve, and allow calls like this for 2 hours, up to 3; the next
three runs go on without asking, the fourth asks; revoked from the Grants page."""

import pytest
from playwright.sync_api import expect

from approvals.models import Approval, Grant
from tests.browser.test_console_in_a_browser import sign_in, start_status_run
from tests.factories import member, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def test_approve_and_allow_then_revoke_from_the_grants_page(server, page, screenshot):
    reviewer("ada", role="admin")
    pat = member("pat")
    first = start_status_run(server, pat, "Checkout is slow.")
    assert first["status"] == "suspended"
    approval = Approval.objects.get(run_id=first["id"])

    sign_in(page, server, "ada")
    page.goto(f"{server.url}/console/approvals/{approval.pk}/")
    expect(page.locator("#allow")).to_contain_text("Calls of acme-ops.post-update by this agent for pat")
    page.select_option("select[name=allow_hours]", "2")
    page.fill("input[name=allow_calls]", "3")
    screenshot(page, "approval-allow")
    page.click("#approve")
    expect(page.locator(".flash")).to_contain_text("Approved")

    statuses = [start_status_run(server, pat, f"Update {n}")["status"] for n in range(4)]
    assert statuses == ["completed", "completed", "completed", "suspended"]

    page.goto(f"{server.url}/console/grants/")
    grant = Grant.objects.get()
    row = page.locator(f"#grant-{grant.pk}")
    expect(row).to_contain_text("3 of 3 calls")
    expect(row).to_contain_text("used up")
    screenshot(page, "grants")
    page.click(f"#revoke-{grant.pk}")
    expect(page.locator(".flash")).to_contain_text(f"Revoked grant {grant.pk}")
    expect(page.locator(f"#grant-{grant.pk}")).to_contain_text("revoked")
    grant.refresh_from_db()
    assert grant.revoked_at is not None
    # On a phone, the page fits its screen (the table scrolls within its card).
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{server.url}/console/grants/")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the grants page is {width}px wide on a 390px screen"
    screenshot(page, "grants-phone")
