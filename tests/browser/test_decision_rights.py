"""The console offers a decision only where the decision action would take it: for every reason
the action refuses (four-eyes, expiry, named reviewers, role), the page shows that very reason
and offers nothing, in real Chromium against a server with four-eyes on."""

from datetime import timedelta

import httpx
import pytest
from django.db import connection
from django.utils import timezone
from playwright.sync_api import expect

from approvals.models import Approval, ApprovalStatus
from tenants.tokens import do_create_token
from tests.browser.test_console_in_a_browser import sign_in, start_status_run
from tests.factories import reviewer
from tests.live_server import LiveServer, database_env

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with (
        django_db_blocker.unblock(),
        LiveServer(database_env(connection) | {"KINDGI_FOUR_EYES": "true"}) as live,
    ):
        yield live


def approve_by_api(server, user, approval_id) -> httpx.Response:
    _, token = do_create_token(user=user)
    return httpx.post(
        f"{server.url}/api/v1/approvals/{approval_id}/complete",
        json={"decision": "approve", "rationale": "ok"},
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )


def test_the_console_offers_exactly_the_decisions_the_action_takes(server, page, screenshot):
    ada = reviewer("ada")
    nina = reviewer("nina")
    bob = reviewer("bob", role="senior")

    def waiting(starter, message):
        return Approval.objects.get(run_id=start_status_run(server, starter, message)["id"])

    refused = {
        "four-eyes": waiting(ada, "Ada started this one."),
        "expiry": waiting(bob, "This one is past its time."),
        "named reviewers": waiting(bob, "Only Nina may decide this one."),
        "role": waiting(bob, "This one needs a senior."),
    }
    Approval.objects.filter(pk=refused["expiry"].pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    Approval.objects.filter(pk=refused["named reviewers"].pk).update(reviewer_ids=[nina.pk])
    Approval.objects.filter(pk=refused["role"].pk).update(required_role="senior")
    offered = waiting(bob, "Ada may decide this one.")

    # What the action says, through the API: each refused, nothing changed.
    reasons = {}
    for why, approval in refused.items():
        response = approve_by_api(server, ada, approval.pk)
        assert response.status_code in (403, 409), (why, response.text)
        reasons[why] = response.json()["error"]["message"]
    assert "four-eyes" in reasons["four-eyes"]
    assert "expired at" in reasons["expiry"]
    assert reasons["named reviewers"] == "only these reviewers may decide this approval: Nina"
    assert "needs a reviewer with the role 'senior'" in reasons["role"]
    assert set(Approval.objects.values_list("status", flat=True)) == {ApprovalStatus.PENDING}

    sign_in(page, server, "ada")
    # Past its expiry an approval leaves the queue; its page still says why it can't be decided.
    expect(page.locator(f"#approval-{refused['expiry'].pk}")).to_have_count(0)
    for why, approval in refused.items():
        if why == "expiry":
            continue
        row = page.locator(f"#approval-{approval.pk}")
        expect(row).to_contain_text(f"Can't decide: {reasons[why]}")
        expect(row.locator("input[type=checkbox]")).to_have_count(0)
        expect(row.get_by_role("link", name="Review")).to_have_count(0)
    row = page.locator(f"#approval-{offered.pk}")
    expect(row.locator("input[type=checkbox]")).to_have_count(1)
    expect(row.get_by_role("link", name="Review")).to_have_count(1)
    screenshot(page, "queue-decision-rights")

    for why, approval in refused.items():
        page.goto(f"{server.url}/console/approvals/{approval.pk}/")
        expect(page.locator(".status-locked")).to_contain_text(f"You can't decide this: {reasons[why]}")
        expect(page.locator("#approve")).to_have_count(0)
        expect(page.locator("#reject")).to_have_count(0)

    # And what is offered is taken.
    page.goto(f"{server.url}/console/approvals/{offered.pk}/")
    page.fill("textarea[name=rationale]", "Checked")
    page.click("#approve")
    expect(page.locator("#run-status")).to_have_text("completed")
    offered.refresh_from_db()
    assert offered.status == ApprovalStatus.APPROVED
