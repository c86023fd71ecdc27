"""Step-up with a passkey, in Chromium with its virtual authenticator (CDP WebAuthn): a reviewer
registers a passkey, and a call whose rule says stepUp is decided only once the passkey answers a
challenge made for that approval and that decision. Without it (an API token, a plain form post,
an answer replayed onto another approval) nothing is decided."""

from urllib.parse import unquote_plus

import httpx
import pytest
from playwright.sync_api import expect

from approvals.actions.rules import check_save_rule
from approvals.models import Approval
from tenants.models import Passkey
from tenants.tokens import do_create_token
from tests.browser.test_console_in_a_browser import PASSWORD, start_status_run
from tests.factories import default_tenant, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


def with_an_authenticator(page) -> None:
    cdp = page.context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    cdp.send(
        "WebAuthn.addVirtualAuthenticator",
        {
            "options": {
                "protocol": "ctap2",
                "transport": "internal",
                "hasResidentKey": True,
                "hasUserVerification": True,
                "isUserVerified": True,
                "automaticPresenceSimulation": True,
            }
        },
    )


def signed_in_at(page, base: str, username: str) -> None:
    page.goto(f"{base}/console/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("h1")).to_have_text("Waiting for a decision")


def test_a_step_up_rule_is_decided_only_with_the_reviewers_passkey(server, page):
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "public posts",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "step_up": True,
        },
        acting_user=None,
        surface="system",
    )
    ada = reviewer("ada", role="admin")
    first = start_status_run(server, ada, "Checkout is back.")
    second = start_status_run(server, ada, "Search is back.")
    first_approval = Approval.objects.get(run_id=first["id"])
    second_approval = Approval.objects.get(run_id=second["id"])
    assert first_approval.gate["stepUp"] is True

    # An API token cannot decide it, whoever holds it: the answer names the console.
    refused = httpx.post(
        f"{server.url}/api/v1/approvals/{first_approval.pk}/complete",
        json={"decision": "approve"},
        headers={"Authorization": f"Bearer {do_create_token(user=ada)[1]}"},
        timeout=30,
    )
    assert refused.status_code == 403
    assert "asks for the reviewer's passkey: decide it in the console" in refused.json()["error"]["message"]

    # Passkeys are for a site's name, not an address: the browser reaches the server as localhost.
    base = server.url.replace("127.0.0.1", "localhost")
    with_an_authenticator(page)
    signed_in_at(page, base, "ada")
    page.goto(f"{base}/console/approvals/{first_approval.pk}/")
    expect(page.locator("#step-up-note")).to_contain_text("You have none yet")

    page.goto(f"{base}/console/passkeys/")
    expect(page.locator("#no-passkeys")).to_be_visible()
    page.fill("input[name=name]", "laptop")
    page.fill("#passkey-register input[name=password]", PASSWORD)  # a session alone adds none
    page.click("#register-passkey")
    expect(page.locator("#passkeys")).to_contain_text("laptop")
    assert Passkey.objects.filter(user=ada).count() == 1

    page.goto(f"{base}/console/approvals/{first_approval.pk}/")
    with page.expect_request(
        lambda request: (
            request.method == "POST" and request.url.endswith(f"/console/approvals/{first_approval.pk}/")
        )
    ) as sent:
        page.click("#approve")
    expect(page.locator("#run-status")).to_have_text("completed")
    first_approval.refresh_from_db()
    assert first_approval.status == "approved"
    answer = dict(item.split("=", 1) for item in sent.value.post_data.split("&"))["step_up"]

    # The same answer, replayed onto another approval (or onto this one again), decides nothing.
    page.goto(f"{base}/console/approvals/{second_approval.pk}/")
    token = page.locator("input[name=csrfmiddlewaretoken]").first.input_value()

    def replay(approval):
        return page.request.post(
            f"{base}/console/approvals/{approval.pk}/",
            form={"csrfmiddlewaretoken": token, "decision": "approve", "step_up": unquote_plus(answer)},
            headers={"Referer": f"{base}/console/approvals/{approval.pk}/"},
        )

    onto_another = replay(second_approval)
    assert onto_another.status == 409  # the console says a refusal of the one door so
    assert "the passkey did not confirm this decision" in onto_another.text()
    assert replay(first_approval).status == 409  # decided already: nothing to decide again
    second_approval.refresh_from_db()
    assert second_approval.status == "pending"

    # A plain post without the passkey's answer is refused too, and says where to decide.
    plain = page.request.post(
        f"{base}/console/approvals/{second_approval.pk}/",
        form={"csrfmiddlewaretoken": token, "decision": "approve"},
        headers={"Referer": f"{base}/console/approvals/{second_approval.pk}/"},
    )
    assert plain.status == 409
    assert "asks for the reviewer&#x27;s passkey" in plain.text()
    second_approval.refresh_from_db()
    assert second_approval.status == "pending"

    # With the passkey, the second is decided too (a rejection, its own challenge).
    page.goto(f"{base}/console/approvals/{second_approval.pk}/")
    page.fill("#id_rationale", "Not yet")
    page.click("#reject")
    expect(page.locator("#run-status")).to_have_text("completed")
    second_approval.refresh_from_db()
    assert second_approval.status == "rejected"


def test_a_mail_link_asks_for_the_passkey_too(server, page):
    from approvals.links import issue_link

    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "public posts",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "step_up": True,
        },
        acting_user=None,
        surface="system",
    )
    sam = reviewer("sam", role="admin")
    run = start_status_run(server, sam, "Checkout is back.")
    approval = Approval.objects.get(run_id=run["id"])
    base = server.url.replace("127.0.0.1", "localhost")
    with_an_authenticator(page)
    signed_in_at(page, base, "sam")
    page.goto(f"{base}/console/passkeys/")
    page.fill("input[name=name]", "phone")
    page.fill("#passkey-register input[name=password]", PASSWORD)
    page.click("#register-passkey")
    expect(page.locator("#passkeys")).to_contain_text("phone")

    # A forwarded link alone decides nothing: its form needs the link's person's passkey.
    link = f"{base}/console/decide/{issue_link(approval, sam, 'approve')}/"
    page.goto(link)
    token = page.locator("input[name=csrfmiddlewaretoken]").first.input_value()
    plain = page.request.post(link, form={"csrfmiddlewaretoken": token}, headers={"Referer": link})
    assert plain.status == 409
    approval.refresh_from_db()
    assert approval.status == "pending"

    page.goto(link)
    page.click("#confirm")
    expect(page.locator("#link-done")).to_contain_text("approved")
    approval.refresh_from_db()
    assert approval.status == "approved"
