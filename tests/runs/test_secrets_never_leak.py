"""A provider key planted in the environment: prompts are stored and sent redacted, and the key
appears in no API response, console page, journal entry, stored run or log line, whatever the
user, the model, a tool or the provider says."""

import io
import json
import logging

import pytest
from django.test import Client

from approvals.models import Approval, Decision
from runs.models import JournalEntry, Run, RunStatus
from tests.api.conftest import client_for
from tests.chat_server import ChatServer, text_reply, tool_calls_reply
from tests.connections.conftest import oauth_server, tracker  # noqa: F401  (fixtures)
from tests.factories import principal, reviewer
from tests.pack_fixtures.probes import SCRIPT

from .decide import decide
from .helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)
KEY = "planted-7Hq2xZ9kLm4Pw8RtVb3N"


@pytest.fixture
def chat(settings, monkeypatch):
    monkeypatch.setenv("KINDGI_OPENAI_COMPATIBLE_API_KEY", KEY)
    with ChatServer() as server:
        settings.KINDGI_DEFAULT_MODEL = f"openai-compatible:tiny@{server.base_url}"
        yield server


@pytest.fixture
def every_log_line(caplog):
    """Each line as the configured handler would write it: through its filters."""
    from core.logs import RunIdFilter, SecretsFilter

    caplog.handler.addFilter(RunIdFilter())
    caplog.handler.addFilter(SecretsFilter())
    caplog.set_level(logging.DEBUG)
    return caplog


def test_a_planted_key_appears_nowhere(chat, every_log_line):
    prompt = f"Use {KEY} with Bearer abc.def.ghi and sk-live12345678 from /home/ada/notes.txt"

    # The user types it; the model is asked, answers, and calls a tool.
    chat.answers = [
        tool_calls_reply(("c1", "probe__read", json.dumps({"label": "a", "pause_ms": 0}))),
        text_reply("ok"),
    ]
    typed = start("probe.remote", prompt)
    assert typed.status == RunStatus.COMPLETED
    assert typed.input["userMessage"] == (
        "Use [REDACTED] with Bearer [REDACTED] and [REDACTED] from [LOCAL_PATH]"
    )
    sent = json.dumps([request["body"] for request in chat.requests])
    assert "[REDACTED]" in sent
    for secret in (KEY, "abc.def.ghi", "sk-live12345678", "/home/ada"):
        assert secret not in sent

    # The provider echoes the key in an error.
    chat.answers = [(401, {"error": {"message": f"Incorrect API key provided: {KEY}"}})]
    refused = start("probe.remote", "Hello?")
    assert refused.status == RunStatus.FAILED
    assert "Incorrect API key provided: [REDACTED]" in refused.failure_message

    # A careless tool returns it; the model repeats it, then proposes a call that carries it.
    SCRIPT.replies += [
        calls(("env", "probe.environment", {"name": "KINDGI_OPENAI_COMPATIBLE_API_KEY"})),
        calls(("w", "probe.write", {"label": f"the key is {KEY}"})),
    ]
    leaked = start("probe.careless", "What is the key?")
    assert leaked.status == RunStatus.SUSPENDED
    assert Approval.objects.get(run=leaked).arguments == {"label": "the key is [REDACTED]", "pause_ms": 30}
    SCRIPT.replies += [answer(f"It is {KEY}.")]
    leaked = decide(leaked, "w", rationale=f"fine, {KEY}")
    assert leaked.output == {"reply": "It is [REDACTED]."}

    # A flow's input carries it.
    flow = start_flow_with(KEY)

    # An engine failure whose message carries it.
    logging.getLogger("kindgi.runs").error("the provider said %s", KEY)

    ada = reviewer("ada")
    api = client_for(ada)
    console = Client()
    console.force_login(ada)
    runs = [typed, refused, leaked, flow]
    seen = {
        "api": [
            api.get("/api/v1/runs").content,
            api.get("/api/v1/approvals").content,
            *(api.get(f"/api/v1/runs/{run.pk}").content for run in runs),
            *(api.get(f"/api/v1/runs/{run.pk}/journal").content for run in runs),
        ],
        "console": [
            console.get("/console/runs/").content,
            *(console.get(f"/console/runs/{run.pk}/").content for run in runs),
            *(console.get(f"/console/approvals/{a.pk}/").content for a in Approval.objects.all()),
        ],
        "database": [
            json.dumps(list(JournalEntry.objects.values_list("payload", flat=True))),
            json.dumps(
                list(Run.objects.values("input", "output", "messages", "failure_message", "waitpoint")),
                default=str,
            ),
            json.dumps(list(Approval.objects.values()), default=str),
            json.dumps(list(Decision.objects.values()), default=str),
        ],
        "logs": [every_log_line.text],
    }
    assert "[REDACTED]" in every_log_line.text
    for where, texts in seen.items():
        for text in texts:
            text = text.decode() if isinstance(text, bytes) else text
            assert KEY not in text, f"the key leaked into the {where}"


def start_flow_with(value: str) -> Run:
    from runs.actions import check_start_run
    from tests.factories import default_tenant

    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.check-order",
        input={"orderId": f"ord_{value}"},
    )
    assert run.input == {"orderId": "ord_[REDACTED]"}
    return run


def test_connection_tokens_and_the_apps_client_secret_appear_nowhere(
    tracker,  # noqa: F811  (the fixture imported above)
    oauth_server,  # noqa: F811
    every_log_line,
    settings,
):
    """Ada's tokens (the first, and those a refresh brings) and the app's client secret, through a
    person's run, a service's run she says yes to, a refresh, webhooks and every page."""
    from datetime import timedelta

    from django.core.management import call_command
    from django.test import override_settings
    from django.utils import timezone

    from approvals.actions.decisions import check_complete_approval
    from approvals.models import Webhook, WebhookDelivery
    from connections.crypto import unseal
    from connections.models import App, Connection
    from runs.actions import check_start_run
    from tests.connections.conftest import CLIENT_SECRET
    from tests.connections.test_connecting import connect
    from tests.factories import default_tenant, member
    from tests.receiver import Receiver

    packs = [*settings.KINDGI_PACKS, "tests.pack_fixtures.connection_probes"]
    with override_settings(KINDGI_PACKS=packs), Receiver() as receiver:
        Webhook.objects.create(tenant=default_tenant(), url=receiver.url, secret="webhook-secret-123456")
        ada = member("ada")
        connection = connect(ada, oauth_server)
        secrets = {unseal(connection.access_token), unseal(connection.refresh_token), CLIENT_SECRET}

        SCRIPT.replies[:] = [calls(("c1", "conn-probe.who-am-i", {})), answer("done")]
        mine = check_start_run(agent_id="conn-probe.assistant", input={"userMessage": "me?"}, acting_user=ada)
        assert mine.status == RunStatus.COMPLETED

        # Her access token expires: the service's run refreshes it, after her yes.
        Connection.objects.filter(pk=connection.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
        SCRIPT.replies[:] = [calls(("c1", "conn-probe.who-am-i", {})), answer("done")]
        principal(default_tenant())  # who answers for the service's token
        call_command(
            "create_api_token",
            "--service",
            "nightly",
            "--tenant",
            "acme",
            "--responsible",
            "pat",
            stdout=io.StringIO(),
        )
        theirs = check_start_run(
            agent_id="conn-probe.assistant",
            input={"userMessage": "who?"},
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            connections={"tracker": "ada"},
        )
        check_complete_approval(
            approval_id=Approval.objects.get(run=theirs).pk, acting_user=ada, decision="approve"
        )
        theirs.refresh_from_db()
        assert theirs.status == RunStatus.COMPLETED
        connection.refresh_from_db()
        assert connection.refreshed_at is not None
        secrets |= {unseal(connection.access_token), unseal(connection.refresh_token)}

        api = client_for(ada)
        console = Client()
        console.force_login(ada)
        seen = [
            api.get("/api/v1/runs").content,
            api.get("/api/v1/approvals").content,
            api.get("/api/v1/connections").content,
            api.get(f"/api/v1/connections/{connection.pk}").content,
            api.get("/api/v1/connection-apps").content,
            *(api.get(f"/api/v1/runs/{run.pk}").content for run in (mine, theirs)),
            *(api.get(f"/api/v1/runs/{run.pk}/journal").content for run in (mine, theirs)),
            console.get("/console/connections/").content,
            *(console.get(f"/console/runs/{run.pk}/").content for run in (mine, theirs)),
            *(console.get(f"/console/approvals/{a.pk}/").content for a in Approval.objects.all()),
            json.dumps(list(JournalEntry.objects.values_list("payload", flat=True))),
            json.dumps(list(Run.objects.values("input", "output", "messages", "waitpoint")), default=str),
            json.dumps(list(Approval.objects.values()), default=str),
            json.dumps(list(WebhookDelivery.objects.values("payload", "last_error")), default=str),
            json.dumps(list(App.objects.values()), default=str),
            *(message["body"] for message in receiver.received),
            every_log_line.text,
        ]
    assert receiver.received, "the webhook was sent nothing"
    assert len(secrets) == 5
    for text in seen:
        text = text.decode() if isinstance(text, bytes) else text
        for secret in secrets:
            assert secret not in text


def test_the_mail_providers_signing_key_appears_nowhere(settings, every_log_line, monkeypatch):
    """Mail through a provider's webhook, signed with a planted key: the key is in no response,
    page, stored mail or log line, and neither is a planted key a sender puts in the mail."""
    import hashlib
    import hmac
    import time

    from mail.models import Mailbox, MailMessage, MailRefusal
    from tests.factories import default_tenant, member
    from tests.mail.conftest import mail

    monkeypatch.setenv("KINDGI_OPENAI_COMPATIBLE_API_KEY", KEY)
    settings.KINDGI_PACKS = [*settings.KINDGI_PACKS, "packs.kindgi_mail"]
    signing_key = "planted-mailgun-key-9QwErTy"
    settings.ANYMAIL = {"MAILGUN_WEBHOOK_SIGNING_KEY": signing_key}
    owner = member("ada", tenant_admin=True)
    mailbox = Mailbox.objects.create(
        tenant=default_tenant(), address="support@acme.test", owner=owner, agent_key="kindgi-mail.responder"
    )
    for number, text in enumerate((f"my key is {KEY}", "hello")):
        timestamp, token = str(int(time.time())), f"token-{number}-abcdefabcdef"
        signature = hmac.new(signing_key.encode(), f"{timestamp}{token}".encode(), hashlib.sha256).hexdigest()
        form = {
            "body-mime": mail(text=text, message_id=f"<s{number}@example.com>").as_string(),
            "recipient": "support@acme.test",
            "sender": "bob@example.com",
            "timestamp": timestamp,
            "token": token,
            "signature": signature,
        }
        assert Client().post("/mail/inbound/mailgun/", form).status_code == 200
    assert MailMessage.objects.count() == 2
    assert Run.objects.filter(trigger="mail").count() == 2

    api = client_for(owner)
    console = Client()
    console.force_login(owner)
    seen = [
        api.get("/api/v1/mailboxes").content,
        api.get(f"/api/v1/mailboxes/{mailbox.pk}").content,
        api.get(f"/api/v1/mailboxes/{mailbox.pk}/messages").content,
        api.get(f"/api/v1/mailboxes/{mailbox.pk}/refusals").content,
        api.get("/api/v1/runs").content,
        *(api.get(f"/api/v1/runs/{run.pk}").content for run in Run.objects.all()),
        console.get("/console/mail/").content,
        console.get(f"/console/mail/{mailbox.pk}/").content,
        *(console.get(f"/console/runs/{run.pk}/").content for run in Run.objects.all()),
        json.dumps(list(MailMessage.objects.values()), default=str),
        json.dumps(list(MailRefusal.objects.values()), default=str),
        json.dumps(list(Run.objects.values("input", "messages")), default=str),
        every_log_line.text,
    ]
    for text in seen:
        text = text.decode() if isinstance(text, bytes) else text
        assert signing_key not in text
    # What the sender wrote is stored as they wrote it but for a provider key, which is redacted.
    assert KEY not in json.dumps(list(Run.objects.values("input")), default=str)
