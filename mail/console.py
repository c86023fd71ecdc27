"""The console's mail pages: your mailboxes (a tenant admin's: the tenant's), and each one's mail,
the runs it started, and what it refused and why."""

from uuid import UUID

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from mail.exceptions import MailboxNotFoundError
from mail.selectors import mailbox_visible_to, mailboxes_visible_to, messages_of, refusals_of

SHOWN = 100


@login_required
def mailboxes_page(request: HttpRequest) -> HttpResponse:
    if getattr(request.user, "membership", None) is None:
        return render(request, "console/not_a_reviewer.html", {"membership": None}, status=403)
    return render(
        request, "console/mailboxes.html", {"mailboxes": mailboxes_visible_to(request.user)[:SHOWN]}
    )


@login_required
def mailbox_page(request: HttpRequest, mailbox_id: UUID) -> HttpResponse:
    if getattr(request.user, "membership", None) is None:
        return render(request, "console/not_a_reviewer.html", {"membership": None}, status=403)
    try:
        mailbox = mailbox_visible_to(request.user, mailbox_id)
    except MailboxNotFoundError:
        return render(request, "console/not_found.html", {"what": "mailbox"}, status=404)
    context = {
        "mailbox": mailbox,
        "messages_list": messages_of(mailbox)[:SHOWN],
        "refusals": refusals_of(mailbox)[:SHOWN],
    }
    return render(request, "console/mailbox.html", context)
