"""A reviewer at work in real headless Chromium, against a live server with real WebSockets."""

import httpx
import pytest
from playwright.sync_api import expect

from approvals.models import Approval
from tenants.tokens import do_create_token
from tests.factories import reviewer

pytestmark = pytest.mark.django_db(transaction=True)
PASSWORD = "a-long-test-password"


def sign_in(page, server, username):
    page.goto(f"{server.url}/console/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Waiting for a decision")


def wait_for_the_live_socket(page):
    """Live updates reach the page only once its socket is open, which the page marks (console.js)."""
    expect(page.locator("#live")).to_have_attribute("data-socket", "open")


def start_status_run(server, user, message):
    _, token = do_create_token(user=user)
    response = httpx.post(
        f"{server.url}/api/v1/runs",
        json={"agentId": "acme-ops.status-agent", "input": {"userMessage": message}},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 201, response.text
    return response.json()


def decide_by_api(server, user, approval_id, decision="approve", rationale="ok"):
    _, token = do_create_token(user=user)
    response = httpx.post(
        f"{server.url}/api/v1/approvals/{approval_id}/complete",
        json={"decision": decision, "rationale": rationale},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert response.status_code == 200, response.text


def test_a_new_approval_appears_without_a_reload_and_approving_completes_the_run(server, page, screenshot):
    ada = reviewer("ada")
    sign_in(page, server, "ada")
    expect(page.get_by_text("Nothing waits for a decision")).to_be_visible()
    wait_for_the_live_socket(page)

    run = start_status_run(server, ada, "Checkout is back to normal.")
    row = page.locator("tr.approval-row")
    expect(row).to_have_count(1)  # arrived over the WebSocket: no reload
    # The row says what the call will do: the arguments, the effect in plain words, why it waits.
    expect(row).to_contain_text('{"message": "Checkout is back to normal."}')
    expect(row).to_contain_text("acts outside Kindgi, on external:status-page (an external side effect)")
    expect(row).to_contain_text("override always_ask (agent code)")
    screenshot(page, "queue")

    row.get_by_role("link", name="Review").click()
    expect(page.locator("#arguments")).to_contain_text('"message": "Checkout is back to normal."')
    screenshot(page, "approval")
    page.fill("textarea[name=rationale]", "Confirmed with the on-call engineer")
    page.click("#approve")
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator(".tool-result")).to_contain_text('"posted": true')
    assert page.url.endswith(f"/console/runs/{run['id']}/")


def test_the_run_page_follows_the_run_live(server, page, screenshot):
    ada = reviewer("ada")
    run = start_status_run(server, ada, "Up again.")
    sign_in(page, server, "ada")
    page.goto(f"{server.url}/console/runs/{run['id']}/")
    expect(page.locator("#run-status")).to_have_text("suspended")
    wait_for_the_live_socket(page)
    decide_by_api(server, ada, Approval.objects.get(run_id=run["id"]).pk)
    expect(page.locator("#run-status")).to_have_text("completed")  # no reload
    expect(page.locator("svg.timeline")).to_contain_text("approved by Ada")
    screenshot(page, "run")


def test_rejecting_needs_a_rationale(server, page):
    ada = reviewer("ada")
    run = start_status_run(server, ada, "Maybe up.")
    sign_in(page, server, "ada")
    page.goto(f"{server.url}/console/approvals/{Approval.objects.get(run_id=run['id']).pk}/")
    page.click("#reject")
    # The error sits on the rationale, which has the focus; the edit step stays shut.
    expect(page.locator("#id_rationale-error")).to_have_text("a rejection needs a rationale")
    expect(page.locator("#id_rationale")).to_be_focused()
    expect(page.locator("#edit")).not_to_have_attribute("open", "")
    page.fill("textarea[name=rationale]", "Not confirmed yet")
    page.click("#reject")
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator(".tool-result")).to_contain_text('"rationale": "Not confirmed yet"')


def test_a_reviewer_with_too_low_a_role_cannot_decide(server, page):
    ada = reviewer("ada")
    run = start_status_run(server, ada, "Senior stuff.")
    approval = Approval.objects.get(run_id=run["id"])
    Approval.objects.filter(pk=approval.pk).update(required_role="senior")
    sign_in(page, server, "ada")
    expect(page.locator("tr.approval-row")).to_contain_text(
        "Can't decide: this approval needs a reviewer with the role 'senior' or higher; Ada is 'standard'"
    )
    page.goto(f"{server.url}/console/approvals/{approval.pk}/")
    expect(page.locator(".status-locked")).to_contain_text(
        "You can't decide this: this approval needs a reviewer with the role 'senior'"
    )
    expect(page.locator("#approve")).to_have_count(0)


def test_edited_arguments_with_an_error_then_success(server, page):
    ada = reviewer("ada")
    run = start_status_run(server, ada, "chekout is back")
    sign_in(page, server, "ada")
    page.goto(f"{server.url}/console/approvals/{Approval.objects.get(run_id=run['id']).pk}/")
    page.click("#edit summary")
    page.fill("textarea[name=arg-message], input[name=arg-message]", "x" * 501)
    page.click("#approve")
    expect(page.locator("#id_arg-message-error")).to_have_text("String should have at most 500 characters")
    expect(page.locator("#edit")).to_have_attribute("open", "")  # the edit stays open beside its error
    page.fill("textarea[name=arg-message], input[name=arg-message]", "Checkout is back to normal.")
    # No box to tick: the edit is the edit, and the page shows it before the decision.
    expect(page.locator("#edit-diff")).to_be_visible()
    # Word by word: what was taken out struck through, what was put in marked.
    expect(page.locator("#edit-diff del")).to_have_text("chekout")
    expect(page.locator("#edit-diff ins")).to_have_text(["Checkout", "to normal."])
    expect(page.locator("#approve")).to_have_text("Approve with these changes")
    page.click("#approve")
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator(".tool-result")).to_contain_text("Checkout is back to normal.")


def test_bulk_approve(server, page):
    ada = reviewer("ada")
    runs = [start_status_run(server, ada, f"Update {index}") for index in range(2)]
    sign_in(page, server, "ada")
    expect(page.locator("tr.approval-row")).to_have_count(2)
    for checkbox in page.locator("input[name=approval]").all():
        checkbox.check()
    page.click("button[name=decision][value=approve]")
    # Nothing is decided before the reviewer sees exactly which calls, with what arguments.
    expect(page.locator("h1")).to_have_text("Approve these 2 calls?")
    expect(page.locator(".confirm-list li")).to_have_count(2)
    expect(page.locator(".confirm-list")).to_contain_text('"message": "Update 0"')
    page.click("#confirm")
    expect(page.locator(".flash")).to_contain_text("Approved 2 approval(s).")
    expect(page.get_by_text("Nothing waits for a decision")).to_be_visible()
    for run in runs:
        response = httpx.get(
            f"{server.url}/api/v1/runs/{run['id']}",
            headers={"Authorization": f"Bearer {do_create_token(user=ada)[1]}"},
        )
        assert response.json()["status"] == "completed"


def test_keyboard_shortcuts_move_and_open(server, page):
    ada = reviewer("ada")
    for index in range(2):
        start_status_run(server, ada, f"Update {index}")
    sign_in(page, server, "ada")
    rows = page.locator("tr.approval-row")
    expect(rows).to_have_count(2)
    page.keyboard.press("j")
    expect(rows.nth(0)).to_have_class("approval-row selected")
    page.keyboard.press("j")
    expect(rows.nth(1)).to_have_class("approval-row selected")
    page.keyboard.press("k")
    expect(rows.nth(0)).to_have_class("approval-row selected")
    page.keyboard.press("a")
    expect(page.locator("#approve")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page.locator("#run-status")).to_have_text("completed")
