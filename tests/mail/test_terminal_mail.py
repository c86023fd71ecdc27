"""Mail printed to the terminal in development: decoded text with whole links, for a person to
read and click."""

import io
import re

import pytest
from django.core.mail import EmailMultiAlternatives

from approvals.notifications import deliver_due_notifications, queue_new_approvals
from mail.terminal import ReadableConsoleBackend
from tests.approvals.test_notifications import LINK, senior_rule, status_run, with_mail
from tests.factories import reviewer

LONG_LINK = "http://127.0.0.1:8111/console/decide/" + "Zm9vYmFy" * 12 + "/"


def printed(*messages) -> str:
    stream = io.StringIO()
    ReadableConsoleBackend(stream=stream).send_messages(list(messages))
    return stream.getvalue()


def test_a_long_link_stays_whole_on_its_line_and_the_text_is_decoded():
    mail = EmailMultiAlternatives(
        subject="Kindgi: Post “Checkout is back” to the status page",
        body=f"Approve:  {LONG_LINK}\nCafé’s checkout — résumé.\n",
        from_email="kindgi@localhost",
        to=["ada@acme.test"],
    )
    mail.attach_alternative(f'<a href="{LONG_LINK}">Approve</a>', "text/html")
    out = printed(mail)
    assert f"Approve:  {LONG_LINK}\n" in out
    assert "Café’s checkout — résumé." in out
    assert "Subject: Kindgi: Post “Checkout is back” to the status page" in out
    assert "To: ada@acme.test" in out
    assert "=\n" not in out
    assert "=3D" not in out
    assert "Content-Transfer-Encoding" not in out
    assert "(also in this mail, not shown: text/html)" in out
    assert "<a href" not in out


@pytest.mark.django_db(transaction=True)
def test_a_real_notification_printed_in_development_has_links_a_person_can_copy(settings, capsys):
    settings.MAILERS = {"default": {"BACKEND": "mail.terminal.ReadableConsoleBackend"}}
    settings.KINDGI_PUBLIC_URL = "http://127.0.0.1:8111"
    senior_rule()
    with_mail(reviewer("sam", role="senior"))
    status_run()
    queue_new_approvals()
    capsys.readouterr()
    deliver_due_notifications()
    out = capsys.readouterr().out
    links = LINK.findall(out)
    assert {action for action, _, _ in links} == {"Approve", "Reject", "Request changes"}
    for _, url, _ in links:
        # Whole: each link alone on its line, ending where the line ends.
        assert re.search(rf"{re.escape(url)}$", out, re.M), url
        assert url.startswith("http://127.0.0.1:8111/console/decide/")
    assert "=\n" not in out


def test_a_mails_text_is_printed_not_obeyed_by_the_terminal():
    """A mail carries what others wrote (a tool's arguments, a subject): its escapes are shown
    as nothing, so a printed mail cannot clear the screen, retitle the window or hide a line."""
    mail = EmailMultiAlternatives(
        subject="Post \x1b]0;owned\x07 now",
        body="Approve: http://x/\x1b[2J\x1b[1A\rhidden\u202e text\n\tindented\n",
        from_email="kindgi@localhost",
        to=["ada@acme.test"],
    )
    out = printed(mail)
    assert not any(char in out for char in "\x1b\x07\r\u202e")
    assert "Approve: http://x/[2J[1A\nhidden text\n\tindented" in out  # mail makes a lone CR a line end
