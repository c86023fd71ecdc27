"""A provider key planted in the environment: prompts are stored and sent redacted, and the key
appears in no API response, console page, journal entry, stored run or log line, whatever the
user, the model, a tool or the provider says."""

import json
import logging

import pytest
from django.test import Client

from approvals.models import Approval, Decision
from runs.models import JournalEntry, Run, RunStatus
from tests.api.conftest import client_for
from tests.chat_server import ChatServer, text_reply, tool_calls_reply
from tests.factories import reviewer
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
        tenant=default_tenant(), flow_id="my-pack.check-order", input={"orderId": f"ord_{value}"}
    )
    assert run.input == {"orderId": "ord_[REDACTED]"}
    return run
