"""The OpenAI-compatible path through pydantic-ai, against a chat-completions server on 127.0.0.1."""

import json

import pytest

from runs.models import RunStatus
from tests.chat_server import ChatServer, Slow, text_reply, tool_calls_reply
from tests.pack_fixtures.probes import TIMELINE

from .decide import decide
from .helpers import start

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def chat(settings):
    with ChatServer() as server:
        settings.KINDGI_DEFAULT_MODEL = f"openai-compatible:tiny@{server.base_url}"
        yield server


def test_a_tool_call_round_trip(chat):
    chat.answers = [
        tool_calls_reply(("call_1", "probe__read", json.dumps({"label": "a", "pause_ms": 0}))),
        text_reply("I read a."),
    ]
    run = start("probe.remote", "Read a.")
    assert run.status == RunStatus.COMPLETED
    assert run.output == {"reply": "I read a."}
    assert TIMELINE.calls("a") == 1

    first, second = (request["body"] for request in chat.requests)
    assert first["model"] == "tiny"
    assert {tool["function"]["name"] for tool in first["tools"]} == {"probe__read", "probe__write"}
    read_tool = next(t for t in first["tools"] if t["function"]["name"] == "probe__read")
    assert read_tool["function"]["description"] == "Reads, slowly."
    assert read_tool["function"]["parameters"]["required"] == ["label"]
    assert first["messages"][0] == {"role": "system", "content": "Use the tools when asked."}
    assert first["messages"][-1]["content"] == "Read a."
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool"
    assert tool_message["tool_call_id"] == "call_1"
    assert json.loads(tool_message["content"]) == {"label": "a"}
    assert second["messages"][-2]["tool_calls"][0]["function"]["name"] == "probe__read"

    called = list(run.journal.filter(kind="model.called"))
    assert called[0].payload["model"] == f"openai-compatible:tiny@{chat.base_url}"
    assert called[0].payload["usage"] == {"inputTokens": 11, "outputTokens": 7}
    assert called[0].payload["toolCalls"] == [
        {"id": "call_1", "toolId": "probe.read", "arguments": {"label": "a", "pause_ms": 0}}
    ]


def test_a_gated_call_waits_and_resumes_with_the_conversation_intact(chat):
    chat.answers = [
        tool_calls_reply(("call_w", "probe__write", '{"label": "w", "pause_ms": 0}')),
        text_reply("Written."),
    ]
    run = start("probe.remote", "Write w.")
    assert run.status == RunStatus.SUSPENDED
    run = decide(run, "call_w")
    assert run.output == {"reply": "Written."}
    assert len(chat.requests) == 2
    assert chat.requests[1]["body"]["messages"][-1]["tool_call_id"] == "call_w"


def test_a_server_error_is_retried_and_journaled(chat):
    chat.answers = [(503, {"error": {"message": "overloaded"}}), text_reply("Back.")]
    run = start("probe.remote", "Hello?")
    assert run.status == RunStatus.COMPLETED
    attempts = list(run.journal.filter(kind="model.called").values_list("payload", flat=True))
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert attempts[0]["retryable"] is True


def test_a_client_error_fails_the_run_without_retrying(chat):
    chat.answers = [(400, {"error": {"message": "your request is malformed"}})]
    run = start("probe.remote", "Hello?")
    assert run.status == RunStatus.FAILED
    assert run.failure_message == (
        "model-error: ModelRequestRejectedError: status_code: 400, model_name: tiny, "
        "body: {'message': 'your request is malformed'}"
    )
    assert len(chat.requests) == 1


def test_tool_call_arguments_that_are_not_json_fail_the_run(chat):
    chat.answers = [tool_calls_reply(("call_1", "probe__read", "{label: a"))]
    run = start("probe.remote", "Read.")
    assert run.status == RunStatus.FAILED
    assert run.failure_message == (
        "model-error: bad-tool-call: the model's arguments for 'probe__read' are not a JSON object"
    )
    assert TIMELINE.calls("a") == 0


def scripted_agents_named(message: str) -> list[str]:
    """The agents a failure offers to try without a model, each checked to need none."""
    from kindgi import ScriptedModel
    from tools.registry import get_registry

    said = " To try Kindgi without a model, run an agent with a scripted one: "
    assert said in message, message
    named = message.split(said)[1].removesuffix(".").split(", ")
    for agent_id in named:
        assert isinstance(get_registry().agent(agent_id).model, ScriptedModel), agent_id
    return named


def test_without_any_model_the_run_fails_saying_what_to_set_and_what_to_try(settings):
    settings.KINDGI_DEFAULT_MODEL = ""
    run = start("probe.remote", "Hello?")
    assert run.failure_message.startswith(
        "no-model: agent probe.remote@1.0.0 names no model and KINDGI_DEFAULT_MODEL is not set: set it "
        "to a model string, e.g. openai:gpt-4.1-mini (with OPENAI_API_KEY) or "
        "openai-compatible:llama3.2@http://127.0.0.1:11434/v1 (Ollama)."
    )
    assert "acme-ops.status-agent" in scripted_agents_named(run.failure_message)


def test_an_openai_model_needs_its_key_from_the_environment(settings, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    settings.KINDGI_DEFAULT_MODEL = "openai:gpt-4.1-mini"
    run = start("probe.remote", "Hello?")
    assert run.failure_message.startswith("no-provider-key: set OPENAI_API_KEY to use an openai: model.")
    assert scripted_agents_named(run.failure_message)


def test_a_model_server_that_is_not_running_is_named_with_what_to_do(settings):
    from tests.live_server import free_port

    nobody = f"http://127.0.0.1:{free_port()}/v1"
    settings.KINDGI_DEFAULT_MODEL = f"openai-compatible:llama3.2@{nobody}"
    settings.KINDGI_MODEL_ATTEMPTS = 2
    settings.KINDGI_MODEL_RETRY_DELAY_SECONDS = 0
    run = start("probe.remote", "Hello?")
    assert run.status == RunStatus.FAILED
    assert run.failure_message.startswith(
        f"model-error: model-unreachable: cannot reach {nobody} for the model "
        f"'openai-compatible:llama3.2@{nobody}' (ModelConnectionError: Connection error.): is its server "
        "running? Or give the agent another model (docs/packs.md, Models)."
    )
    assert "acme-ops.status-agent" in scripted_agents_named(run.failure_message)
    attempts = run.journal.filter(kind="model.called").values_list("payload", flat=True)
    assert [attempt["retryable"] for attempt in attempts] == [True, True]


def test_ollamas_port_is_named_as_ollamas(settings):
    from runs.providers import ProviderModel

    model = ProviderModel("openai-compatible:llama3.2@http://127.0.0.1:11434/v1")
    assert "(Ollama listens there: `ollama pull llama3.2 && ollama serve`)?" in model._unreachable(
        ConnectionError("refused")
    )


def test_a_bad_model_string_is_named(settings):
    settings.KINDGI_DEFAULT_MODEL = "openai-compatible:tiny"
    run = start("probe.remote", "Hello?")
    assert run.failure_message.startswith("bad-model-string: 'openai-compatible:tiny' must look like")


def test_a_model_that_times_out_is_retried_then_fails_the_run_saying_so(chat, settings):
    settings.KINDGI_MODEL_TIMEOUT_SECONDS = 0.2
    chat.answers = [Slow(1, text_reply("Too late.")), text_reply("In time.")]
    run = start("probe.remote", "Hello?")
    assert (run.status, run.output) == (RunStatus.COMPLETED, {"reply": "In time."})
    first = run.journal.filter(kind="model.called").values_list("payload", flat=True).first()
    assert (first["attempt"], first["retryable"]) == (1, True)

    settings.KINDGI_MODEL_ATTEMPTS = 2
    chat.answers = [Slow(1, text_reply("Late.")), Slow(1, text_reply("Late again."))]
    run = start("probe.remote", "Hello again?")
    assert run.status == RunStatus.FAILED
    assert run.failure_message.startswith("model-error: ")
    assert "timed out" in run.failure_message.lower()
    assert run.journal.filter(kind="model.called").count() == 2
    assert not run.journal.filter(kind__startswith="tool.").exists()


def test_a_tool_name_the_model_made_up_is_refused_as_data(chat):
    chat.answers = [
        tool_calls_reply(("call_1", "probe__delete_everything", "{}")),
        text_reply("I cannot do that."),
    ]
    run = start("probe.remote", "Delete it all.")
    assert run.status == RunStatus.COMPLETED
    [result] = [m["content"] for m in run.messages if m["role"] == "tool"]
    assert result["success"] is False
    assert result["error"]["code"] == "TOOL_NOT_ALLOWED"
    assert result["error"]["message"].endswith("is not one of this agent's tools.")
    assert not run.journal.filter(kind="tool.completed").exists()
