"""The mailbox form in the admin: a sender allow-list without DKIM is saved, with a warning that
the senders it names can be forged."""

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from mail.models import Mailbox
from tests.factories import default_tenant

pytestmark = pytest.mark.django_db(transaction=True)


def form(ada, **changes) -> dict:
    return {
        "tenant": default_tenant().pk,
        "address": "support@acme.test",
        "owner": ada.pk,
        "agent_key": "kindgi-mail.responder",
        "flow_key": "",
        "allowed_senders": '["trusted.example"]',
        "size_limit": 10_485_760,
        "enabled": "on",
    } | changes


def warnings_of(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request) if message.level_tag == "warning"]


def test_an_allow_list_without_dkim_is_saved_with_a_warning_that_from_can_be_forged(admin_client, ada):
    page = admin_client.get(reverse("admin:mail_mailbox_add"))
    assert "Without DKIM required, either can be forged." in page.text

    saved = admin_client.post(reverse("admin:mail_mailbox_add"), form(ada))
    assert saved.status_code == 302, saved.content
    assert Mailbox.objects.get().allowed_senders == ["trusted.example"]
    [warning] = warnings_of(saved)
    assert "does not require DKIM" in warning
    assert "can be forged" in warning


@pytest.mark.parametrize(
    "changes",
    [{"require_dkim": "on"}, {"allowed_senders": "[]"}],
    ids=["DKIM required", "no allow-list"],
)
def test_no_warning_when_dkim_is_required_or_anyone_may_send(admin_client, ada, changes):
    saved = admin_client.post(reverse("admin:mail_mailbox_add"), form(ada, **changes))
    assert saved.status_code == 302, saved.content
    assert warnings_of(saved) == []
