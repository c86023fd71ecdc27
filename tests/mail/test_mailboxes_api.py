"""Mailboxes through the API and the console: a tenant admin makes them, checked as the admin
checks them; a mailbox's mail and refusals are its owner's and its tenant admins' to see."""

import pytest
from django.test import Client

from mail.models import Mailbox, MailMessage, MailRefusal
from tests.api.conftest import client_for
from tests.factories import default_tenant, member, other_tenant
from tests.mail.conftest import mail, send

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_tenant_admin_makes_a_mailbox_and_bad_fields_are_named(ada):
    admin = client_for(member("tess", tenant_admin=True))
    made = admin.post(
        "/api/v1/mailboxes",
        {
            "address": "Help@Acme.test",
            "owner": "ada",
            "agentId": "kindgi-mail.responder",
            "allowedSenders": ["example.com"],
        },
        format="json",
    )
    assert made.status_code == 201, made.content
    body = made.json()
    assert body["address"] == "help@acme.test"
    assert (body["owner"], body["agentId"], body["sizeLimit"], body["requireDkim"]) == (
        "ada",
        "kindgi-mail.responder",
        10 * 1024 * 1024,
        False,
    )

    member("olga", tenant=other_tenant())
    bad = admin.post(
        "/api/v1/mailboxes",
        {
            "address": "help@acme.test",
            "owner": "olga",
            "agentId": "nope.agent",
            "flowId": "my-pack.check-order",
        },
        format="json",
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["errors"] == [
        "/address: help@acme.test is already a mailbox",
        "/owner: there is no person 'olga' in this tenant",
        "/agentId: give exactly one of an agent and a flow for its mail to start",
    ]
    too_small = admin.post(
        "/api/v1/mailboxes",
        {"address": "x@acme.test", "owner": "ada", "agentId": "kindgi-mail.responder", "sizeLimit": 0},
        format="json",
    )
    assert too_small.json()["error"]["details"]["errors"] == [
        "/sizeLimit: must be a whole number from 1 to 26214400"
    ]
    unknown = admin.post(
        "/api/v1/mailboxes", {"address": "x@acme.test", "owner": "ada", "colour": "red"}, format="json"
    )
    assert unknown.status_code == 400
    assert "colour" in unknown.json()["error"]["message"]
    assert Mailbox.objects.count() == 1

    changed = admin.patch(f"/api/v1/mailboxes/{body['id']}", {"requireDkim": True}, format="json")
    assert changed.status_code == 200
    assert changed.json()["requireDkim"] is True
    not_mail = admin.patch(
        f"/api/v1/mailboxes/{body['id']}", {"agentId": "", "flowId": "my-pack.check-order"}, format="json"
    )
    assert not_mail.json()["error"]["details"]["errors"] == [
        "/flowId: flow 'my-pack.check-order' takes no mail (its input has no field \"mail\")"
    ]


def test_only_a_tenant_admin_makes_or_changes_a_mailbox(ada, mailbox):
    owner = client_for(ada)
    refused = owner.post(
        "/api/v1/mailboxes",
        {"address": "x@acme.test", "owner": "ada", "agentId": "kindgi-mail.responder"},
        format="json",
    )
    assert refused.status_code == 403
    assert (
        owner.patch(f"/api/v1/mailboxes/{mailbox.pk}", {"enabled": False}, format="json").status_code == 403
    )
    assert owner.delete(f"/api/v1/mailboxes/{mailbox.pk}").status_code == 403
    mailbox.refresh_from_db()
    assert mailbox.enabled


def test_a_mailboxs_mail_and_refusals_are_its_owners_and_admins_to_see(
    receiver, mailbox, ada, django_assert_max_num_queries
):
    for number in range(3):
        send(receiver, mail(message_id=f"<m{number}@example.com>"))
    send(receiver, mail(message_id="<m0@example.com>"))  # a duplicate
    owner = client_for(ada)
    with django_assert_max_num_queries(8):
        listed = owner.get(f"/api/v1/mailboxes/{mailbox.pk}/messages").json()["items"]
    assert [item["messageId"] for item in listed] == [
        "<m2@example.com>",
        "<m1@example.com>",
        "<m0@example.com>",
    ]
    assert all(item["runId"] for item in listed)
    assert listed[0]["from"] == "bob@example.com"
    refusals = owner.get(f"/api/v1/mailboxes/{mailbox.pk}/refusals").json()["items"]
    assert [(r["reason"], r["smtpCode"]) for r in refusals] == [("duplicate", 250)]

    for number in range(3, 8):
        send(receiver, mail(message_id=f"<m{number}@example.com>"))
    with django_assert_max_num_queries(8):
        assert len(owner.get(f"/api/v1/mailboxes/{mailbox.pk}/messages").json()["items"]) == 8

    admin = client_for(member("tess", tenant_admin=True))
    assert admin.get(f"/api/v1/mailboxes/{mailbox.pk}/messages").status_code == 200
    stranger = client_for(member("bea"))
    assert stranger.get("/api/v1/mailboxes").json()["items"] == []
    for path in ("", "/messages", "/refusals"):
        assert stranger.get(f"/api/v1/mailboxes/{mailbox.pk}{path}").status_code == 404

    browser = Client()
    browser.force_login(ada)
    assert "support@acme.test" in browser.get("/console/mail/").text
    page = browser.get(f"/console/mail/{mailbox.pk}/").text
    assert "Where is my order?" in page
    assert "a duplicate (same Message-ID)" in page
    strangers = Client()
    strangers.force_login(member("cy"))
    assert strangers.get(f"/console/mail/{mailbox.pk}/").status_code == 404
    assert MailMessage.objects.count() == 8
    assert MailRefusal.objects.count() == 1


def test_the_console_escapes_what_a_sender_wrote(receiver, mailbox, ada):
    send(receiver, mail(subject="<script>alert(1)</script>"))
    browser = Client()
    browser.force_login(ada)
    page = browser.get(f"/console/mail/{mailbox.pk}/").text
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert default_tenant().mailboxes.count() == 1


def test_the_admin_checks_a_mailbox_as_the_api_does(ada):
    from django.contrib.auth import get_user_model

    root = get_user_model().objects.create_superuser("root", password="a-long-test-password")
    browser = Client()
    browser.force_login(root)
    form = {
        "tenant": str(default_tenant().pk),
        "address": "Sales@Acme.test",
        "owner": str(ada.pk),
        "agent_key": "nope.agent",
        "flow_key": "",
        "allowed_senders": "[]",
        "size_limit": "1000",
        "enabled": "on",
    }
    refused = browser.post("/admin/mail/mailbox/add/", form)
    assert refused.status_code == 200
    assert "/agentId: there is no agent &#x27;nope.agent&#x27;" in refused.text
    assert not Mailbox.objects.exists()
    made = browser.post("/admin/mail/mailbox/add/", form | {"agent_key": "kindgi-mail.responder"})
    assert made.status_code == 302, made.text[:2000]
    assert Mailbox.objects.get().address == "sales@acme.test"
