"""A mail over real SMTP starts a run of its mailbox's agent; its read waits for the owner's yes,
its reply for a reviewer; the reply reaches the world in its thread, and the answer to the reply
continues the same conversation."""

import pytest
from django.test import Client

from approvals.actions.decisions import check_complete_approval
from approvals.models import Approval, ApprovalStatus
from mail.models import MailMessage
from runs.models import Run, RunStatus
from tests.factories import reviewer
from tests.mail.conftest import mail, send

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_mail_is_read_with_the_owners_yes_and_answered_after_the_gate(receiver, sink, mailbox, ada):
    rita = reviewer("rita")
    send(receiver, mail())

    run = Run.objects.get()
    assert (run.trigger, run.started_by, run.agent_key) == ("mail", None, "kindgi-mail.responder")
    assert run.status == RunStatus.SUSPENDED
    received = MailMessage.objects.get(direction="in")
    assert received.run == run
    assert run.input["mail"]["id"] == str(received.pk)
    assert run.input["mail"]["from"] == "bob@example.com"
    assert run.input["mail"]["subject"] == "Where is my order?"
    # The model reads the mail as outside data, never as instructions.
    first = run.messages[1]
    assert first["outsideData"] is True
    assert first["content"]["text"].startswith("Hello, my order ord_1001")

    # The read waits for Ada's yes: the mailbox's owner, naming the mailbox and its app.
    asking = Approval.objects.get(run=run)
    assert asking.subject_kind == "connection:use"
    assert asking.tool_key == "kindgi-mail.read"
    assert asking.connection == {
        "app": "mailbox",
        "ownerId": ada.pk,
        "owner": "ada",
        "label": "support@acme.test",
    }
    browser = Client()
    browser.force_login(ada)
    page = browser.get(f"/console/approvals/{asking.pk}/").text
    assert "support@acme.test" in page
    decided = browser.post(f"/console/approvals/{asking.pk}/", {"decision": "approve"})
    assert decided.status_code == 302, decided.content

    # The reply waits at its gate (external:mail) for a reviewer; nothing is sent before.
    run.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED, (run.output, [m for m in run.messages if m["role"] == "tool"])
    gate = Approval.objects.get(run=run, status=ApprovalStatus.PENDING)
    assert (gate.subject_kind, gate.tool_key) == ("tool-call:pending", "kindgi-mail.reply")
    assert sink.received == []
    check_complete_approval(approval_id=gate.pk, acting_user=rita, decision="approve")

    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED, run.failure_message
    assert run.output == {"reply": "Answered bob@example.com."}
    [sent] = sink.received
    assert sent["to"] == ["bob@example.com"]
    answer = sent["message"]
    assert answer["In-Reply-To"] == "<m1@example.com>"
    assert answer["References"] == "<m1@example.com>"
    assert answer["Subject"] == "Re: Where is my order?"
    assert answer["From"] == "support@acme.test"
    assert answer["X-Kindgi-Loop"] == "support@acme.test"
    assert answer["Auto-Submitted"] == "auto-replied"
    assert "we have received it" in answer.get_content()
    outgoing = MailMessage.objects.get(direction="out")
    assert outgoing.message_id == answer["Message-ID"]
    assert outgoing.conversation_id == run.conversation_id

    # Bob answers the reply: the same conversation goes on, and asks Ada again (a new run).
    send(
        receiver,
        mail(
            subject="Re: Re: Where is my order?",
            text="Thanks! Any news?",
            message_id="<m2@example.com>",
            In_Reply_To=answer["Message-ID"],
            References=f"<m1@example.com> {answer['Message-ID']}",
        ),
    )
    second = Run.objects.exclude(pk=run.pk).get()
    assert second.conversation_id == run.conversation_id
    assert second.trigger == "mail"
    assert second.status == RunStatus.SUSPENDED
    assert Approval.objects.get(run=second).subject_kind == "connection:use"
    # It sees the first turn's conversation, the first mail still as outside data.
    history = [m for m in second.messages if m.get("outsideData") and m["role"] == "user"]
    assert [m["content"]["messageId"] for m in history] == ["<m1@example.com>", "<m2@example.com>"]


def test_the_owners_no_leaves_the_mail_unread_and_unanswered(receiver, sink, mailbox, ada):
    send(receiver, mail())
    run = Run.objects.get()
    asking = Approval.objects.get(run=run)
    check_complete_approval(
        approval_id=asking.pk, acting_user=ada, decision="reject", rationale="not this one"
    )
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert run.output["reply"].startswith("Not answered:")
    assert "CONNECTION_REFUSED" in run.output["reply"]
    assert not run.journal.filter(kind="tool.called").exists()
    assert sink.received == []


def test_in_a_run_the_owner_started_the_read_runs_without_asking(mailbox, ada):
    from django.test import override_settings

    from runs.actions import check_start_run
    from tests.pack_fixtures.probes import SCRIPT
    from tests.runs.helpers import answer, calls

    received = MailMessage.objects.create(
        tenant=mailbox.tenant,
        mailbox=mailbox,
        direction="in",
        message_id="<m9@example.com>",
        from_address="bob@example.com",
        to=["support@acme.test"],
        subject="Invoice",
        text="Please find the invoice.",
    )
    packs = [
        "packs.my_pack",
        "packs.acme_ops",
        "packs.kindgi_mail",
        "tests.pack_fixtures.probes",
        "tests.pack_fixtures.mail_probes",
    ]
    with override_settings(KINDGI_PACKS=packs):
        SCRIPT.reset()
        SCRIPT.replies[:] = [
            calls(("s", "kindgi-mail.search", {"query": "invoice"})),
            calls(("r", "kindgi-mail.read", {"id": str(received.pk)})),
            answer("done"),
        ]
        run = check_start_run(
            agent_id="mail-probe.reader", input={"userMessage": "my invoices?"}, acting_user=ada
        )
    assert run.status == RunStatus.COMPLETED, run.failure_message
    assert not Approval.objects.filter(run=run).exists()
    results = {m["callId"]: m for m in run.messages if m["role"] == "tool"}
    assert results["s"]["outsideData"] is True
    assert [found["id"] for found in results["s"]["content"]["messages"]] == [str(received.pk)]
    assert results["r"]["content"]["text"] == "Please find the invoice."

    # Someone else's run reaches only their own mailboxes: Ada's mail is not there for Bea.
    from tests.factories import member

    bea = member("bea")
    with override_settings(KINDGI_PACKS=packs):
        SCRIPT.replies[:] = [calls(("r", "kindgi-mail.read", {"id": str(received.pk)})), answer("done")]
        theirs = check_start_run(
            agent_id="mail-probe.reader", input={"userMessage": "read it"}, acting_user=bea
        )
    result = next(m for m in theirs.messages if m["role"] == "tool")["content"]
    assert result["error"]["code"] == "MAIL_NOT_FOUND"


def test_a_mail_is_stored_whole_and_its_attachments_are_kept_not_opened(receiver, mailbox):
    message = mail()
    message.add_alternative("<p>Hello, my order <b>ord_1001</b> has not arrived.</p>", subtype="html")
    message.add_attachment(
        b"%PDF-1.4 not really", maintype="application", subtype="pdf", filename="invoice.pdf"
    )
    message.add_attachment(
        b"#!/bin/sh\necho pwned\n", maintype="application", subtype="x-sh", filename="run-me.sh"
    )
    send(receiver, message)

    received = MailMessage.objects.get()
    assert received.text.startswith("Hello, my order ord_1001")
    assert "<b>ord_1001</b>" in received.html
    assert ["Subject", "Where is my order?"] in received.headers
    stored = {a.filename: (a.content_type, a.size, bytes(a.content)) for a in received.attachments.all()}
    assert stored == {
        "invoice.pdf": ("application/pdf", 19, b"%PDF-1.4 not really"),
        "run-me.sh": ("application/x-sh", 21, b"#!/bin/sh\necho pwned\n"),
    }
    run = Run.objects.get()
    assert run.input["mail"]["attachments"] == [
        {"filename": "invoice.pdf", "contentType": "application/pdf", "size": 19},
        {"filename": "run-me.sh", "contentType": "application/x-sh", "size": 21},
    ]


def test_a_mail_started_run_reaches_only_its_own_mailbox(receiver, ada):
    from django.test import override_settings

    from mail.models import Mailbox
    from tests.factories import default_tenant
    from tests.pack_fixtures.probes import SCRIPT
    from tests.runs.helpers import answer, calls

    packs = [
        "packs.my_pack",
        "packs.kindgi_mail",
        "tests.pack_fixtures.probes",
        "tests.pack_fixtures.mail_probes",
    ]
    with override_settings(KINDGI_PACKS=packs):
        sales = Mailbox.objects.create(
            tenant=default_tenant(), address="sales@acme.test", owner=ada, agent_key="mail-probe.reader"
        )
        private = Mailbox.objects.create(
            tenant=default_tenant(), address="ada@acme.test", owner=ada, agent_key="mail-probe.reader"
        )
        secret = MailMessage.objects.create(
            tenant=private.tenant,
            mailbox=private,
            direction="in",
            message_id="<private@example.com>",
            from_address="doctor@example.com",
            to=["ada@acme.test"],
            subject="Your results",
            text="private",
        )
        SCRIPT.reset()
        SCRIPT.replies[:] = [
            calls(("r", "kindgi-mail.read", {"id": str(secret.pk)})),
            calls(("s", "kindgi-mail.search", {"query": ""})),
            answer("done"),
        ]
        send(receiver, mail(to="sales@acme.test"))
        run = Run.objects.get()
        check_complete_approval(
            approval_id=Approval.objects.get(run=run).pk, acting_user=ada, decision="approve"
        )
        run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED, run.failure_message
    results = {m["callId"]: m["content"] for m in run.messages if m["role"] == "tool"}
    assert results["r"]["error"]["code"] == "MAIL_NOT_FOUND"
    assert [found["mailbox"] for found in results["s"]["messages"]] == ["sales@acme.test"]
    assert sales.messages.count() == 1
