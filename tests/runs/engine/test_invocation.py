from kindgi import ToolContext
from runs.engine.invocation import CallStatus, invoke
from runs.engine.validation import json_pointer
from tests.pack_fixtures.probes import bad_output, explode, read, refuse_tool, typed

SIX_BAD_FIELDS = {
    "order_id": "order-1",
    "quantity": 0,
    "price_cents": -1,
    "currency": "EURO",
    "email": "nobody",
    "note": "far too long",
}


def test_valid_input_runs_and_the_output_is_json():
    invocation = invoke(read, {"label": "a", "pause_ms": 0}, ToolContext())
    assert invocation.status == CallStatus.COMPLETED
    assert invocation.result == {"label": "a"}
    assert invocation.duration_ms >= 0


def test_six_bad_fields_report_five_as_data_and_never_reach_the_tool():
    invocation = invoke(typed, SIX_BAD_FIELDS, ToolContext())
    assert invocation.status == CallStatus.FAILED
    error = invocation.result["error"]
    assert invocation.result["success"] is False
    assert invocation.result["stateChanged"] is False
    assert error["code"] == "INVALID_TOOL_INPUT"
    assert error["retryable"] is True
    assert error["recommendedAction"] == "Correct the invalid field and retry the request."
    listed = error["message"].removeprefix("The tool input is invalid: ").split("; ")
    assert len(listed) == 5
    assert listed[0] == "/order_id: String should match pattern '^ord_\\d+$'"
    assert listed[1] == "/quantity: Input should be greater than or equal to 1"
    assert error["message"].endswith("(and 1 more)")


def test_missing_and_non_object_input():
    missing = invoke(read, {}, ToolContext()).result["error"]["message"]
    assert missing == "The tool input is invalid: /label: Field required"
    not_object = invoke(read, "label=a", ToolContext()).result["error"]["message"]
    assert not_object.startswith("The tool input is invalid: /: Input should be")


def test_a_tool_error_comes_back_with_its_code_and_hint():
    invocation = invoke(refuse_tool, {}, ToolContext())
    assert invocation.status == CallStatus.FAILED
    assert invocation.result == {
        "success": False,
        "error": {
            "code": "NOT_TODAY",
            "message": "Not today.",
            "retryable": True,
            "recommendedAction": "Ask again tomorrow.",
        },
        "stateChanged": False,
    }
    assert invocation.traceback == ""


def test_an_unexpected_exception_is_tool_failed_data_and_keeps_the_traceback():
    invocation = invoke(explode, {}, ToolContext())
    assert invocation.result["error"]["code"] == "TOOL_FAILED"
    assert "database on fire" not in str(invocation.result)
    assert "RuntimeError: database on fire" in invocation.traceback


def test_output_that_does_not_match_its_type_fails():
    invocation = invoke(bad_output, {}, ToolContext())
    assert invocation.result["error"]["code"] == "INVALID_TOOL_OUTPUT"
    assert "/label: Field required" in invocation.result["error"]["message"]


def test_json_pointers_escape_slashes_and_tildes():
    assert json_pointer(["a/b", "c~d", 0]) == "/a~1b/c~0d/0"
    assert json_pointer([]) == "/"
