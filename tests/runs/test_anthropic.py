"""`anthropic:` models through pydantic-ai, against a server on 127.0.0.1 speaking the Messages API."""

import pytest

from runs.models import RunStatus
from tests.chat_server import MessagesServer, text_blocks_reply, tool_use_reply
from tests.pack_fixtures.probes import TIMELINE

from .decide import decide
from .helpers import start

pytestmark = pytest.mark.django_db(transaction=True)

KEY = "sk-ant-planted-key-0042"


@pytest.fixture
def messages(settings, monkeypatch):
    with MessagesServer() as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        settings.KINDGI_DEFAULT_MODEL = "anthropic:claude-sonnet-5-5"
        yield server


def test_a_tool_call_round_trip_and_a_gate_over_the_messages_api(messages):
    messages.answers = [
        tool_use_reply(("toolu_1", "probe__read", {"label": "a", "pause_ms": 0}), text="Reading."),
        tool_use_reply(("toolu_2", "probe__write", {"label": "w", "pause_ms": 0})),
        text_blocks_reply("Read a, wrote w."),
    ]
    run = start("probe.remote", "Read a, then write w.")
    assert run.status == RunStatus.SUSPENDED
    assert run.waitpoint["toolId"] == "probe.write"
    assert TIMELINE.calls("a") == 1

    first = messages.requests[0]
    assert first["path"].startswith("/v1/messages")
    assert KEY in (
        first["headers"].get("x-api-key"),
        first["headers"].get("Authorization", "").removeprefix("Bearer "),
    )
    body = first["body"]
    assert body["model"] == "claude-sonnet-5-5"
    assert "Use the tools when asked." in str(body["system"])
    assert {tool["name"] for tool in body["tools"]} == {"probe__read", "probe__write"}
    assert body["messages"][-1]["role"] == "user"
    assert "Read a, then write w." in str(body["messages"][-1]["content"])

    run = decide(run, "toolu_2", "approve")
    assert run.status == RunStatus.COMPLETED
    assert run.output == {"reply": "Read a, wrote w."}
    assert TIMELINE.calls("w") == 1
    # The tool's result went back as a tool_result block for the model's own call id.
    last = messages.requests[-1]["body"]["messages"]
    results = [block for message in last for block in message["content"] if isinstance(block, dict)]
    assert any(block.get("type") == "tool_result" and block["tool_use_id"] == "toolu_2" for block in results)

    called = list(run.journal.filter(kind="model.called"))
    assert called[0].payload["model"] == "anthropic:claude-sonnet-5-5"
    assert called[0].payload["usage"] == {"inputTokens": 13, "outputTokens": 5}
    assert KEY not in str(list(run.journal.values_list("payload", flat=True)))


def test_an_overloaded_server_is_retried_and_a_bad_request_is_not(messages, settings):
    settings.KINDGI_MODEL_RETRY_DELAY_SECONDS = 0
    overloaded = (529, {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    messages.answers = [overloaded, text_blocks_reply("Fine now.")]
    run = start("probe.remote", "Hello")
    assert (run.status, run.output) == (RunStatus.COMPLETED, {"reply": "Fine now."})
    attempts = list(run.journal.filter(kind="model.called"))
    assert [entry.payload.get("retryable") for entry in attempts] == [True, None]

    bad = (400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad tools"}})
    messages.answers = [bad]
    run = start("probe.remote", "Hello again")
    assert run.status == RunStatus.FAILED
    assert run.failure_message.startswith("model-error: ")
    assert "status_code: 400" in run.failure_message
    assert len(messages.requests) == 3


def test_no_key_is_a_clear_failure_before_any_request(messages, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    run = start("probe.remote", "Hello")
    assert run.status == RunStatus.FAILED
    assert run.failure_message.startswith(
        "no-provider-key: set ANTHROPIC_API_KEY to use an anthropic: model. To try Kindgi without a model"
    )
    assert messages.requests == []
