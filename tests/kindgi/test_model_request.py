"""What a scripted model reads of its request: the user's latest message, and the results that
came after it, in the order they came."""

from kindgi.models import ModelRequest


def request(*messages) -> ModelRequest:
    return ModelRequest(instructions="", messages=tuple(messages), tools=())


def tool(call_id: str) -> dict:
    return {"role": "tool", "callId": call_id, "toolId": "t", "content": call_id}


def test_results_since_the_user_spoke_come_in_order():
    asked = request(
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "", "toolCalls": []},
        tool("old"),
        {"role": "user", "content": "second"},
        {"role": "assistant", "content": "", "toolCalls": []},
        tool("a"),
        tool("b"),
        {"role": "assistant", "content": "", "toolCalls": []},
        tool("c"),
    )
    assert asked.last_user_message == "second"
    assert [result["callId"] for result in asked.results_since_user] == ["a", "b", "c"]


def test_before_any_result_there_are_none():
    asked = request({"role": "user", "content": "hello"})
    assert asked.results_since_user == []
    assert request().last_user_message == ""
