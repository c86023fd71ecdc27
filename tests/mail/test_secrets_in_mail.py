"""Mail is stored input like any other: a configured provider key in it is scrubbed before it
reaches a row, the API or the model, however the mail spells it (plain, base64, quoted-printable,
an encoded subject)."""

import pytest

from mail.models import MailMessage
from tests.api.conftest import client_for
from tests.mail.conftest import mail, send

pytestmark = pytest.mark.django_db(transaction=True)
KEY = "sk-proj-Ab3dEf7hIj" + "Kl9Mn2Op4Qr6St8Uv0Wx"


@pytest.mark.parametrize("encoding", ["7bit", "base64", "quoted-printable"])
def test_a_key_mailed_in_is_never_stored_nor_shown(receiver, mailbox, ada, monkeypatch, encoding):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    message = mail(subject=f"the key is {KEY}", text=f"Here it is: {KEY}\n")
    message.set_content(f"Here it is: {KEY}\n", cte=encoding)
    send(receiver, message)

    [stored] = MailMessage.objects.all()
    assert KEY not in stored.subject + stored.text + stored.html + str(stored.headers)
    assert "[REDACTED]" in stored.subject
    assert "[REDACTED]" in stored.text
    ada.membership.is_tenant_admin = True
    ada.membership.save()
    listed = client_for(ada).get(f"/api/v1/mailboxes/{mailbox.pk}/messages")
    assert listed.status_code == 200, listed.content
    assert KEY not in listed.text
