import pytest

from runs.engine.gates import Gate, decide_gate

BASE = {
    "tool_id": "acme-ops.post-update",
    "tool_is_read_only": False,
    "read_only_run": False,
    "gates_enabled": True,
    "overrides": {},
    "admin_overrides": (),
    "approved_tools": (),
}


@pytest.mark.parametrize(
    ("changes", "gate", "reason"),
    [
        # run policy comes first, whatever the overrides say
        (
            {"read_only_run": True, "overrides": {"acme-ops.post-update": "never_ask"}},
            Gate.REFUSE,
            'run policy: this is a read-only run and tool "acme-ops.post-update" is not read-only',
        ),
        ({"read_only_run": True, "tool_is_read_only": True}, Gate.RUN, "default: the tool is read-only"),
        # the agent's override, from code or from the admin
        ({"overrides": {"acme-ops.post-update": "always_ask"}}, Gate.ASK, "override always_ask (agent code)"),
        (
            {"overrides": {"acme-ops.post-update": "always_ask"}, "approved_tools": {"acme-ops.post-update"}},
            Gate.ASK,
            "override always_ask (agent code)",
        ),
        (
            {"overrides": {"acme-ops.post-update": "never_ask"}, "admin_overrides": {"acme-ops.post-update"}},
            Gate.RUN,
            "override never_ask (admin)",
        ),
        (
            {"tool_is_read_only": True, "overrides": {"acme-ops.post-update": "always_ask"}},
            Gate.ASK,
            "override always_ask (agent code)",
        ),
        (
            {"gates_enabled": False, "overrides": {"acme-ops.post-update": "always_ask"}},
            Gate.ASK,
            "override always_ask (agent code)",
        ),
        # the default
        ({"gates_enabled": False}, Gate.RUN, "default: the agent has no tool gates"),
        ({"tool_is_read_only": True}, Gate.RUN, "default: the tool is read-only"),
        ({}, Gate.ASK, "default: first use of a tool that is not read-only"),
        (
            {"approved_tools": {"acme-ops.post-update"}},
            Gate.RUN,
            "default: approved earlier in this conversation",
        ),
        (
            {"approved_tools": {"acme-ops.greet"}},
            Gate.ASK,
            "default: first use of a tool that is not read-only",
        ),
    ],
)
def test_gate_resolution(changes, gate, reason):
    decision = decide_gate(**(BASE | changes))
    assert (decision.gate, decision.reason) == (gate, reason)


def test_a_refusal_carries_the_code_the_model_receives():
    decision = decide_gate(**(BASE | {"read_only_run": True}))
    assert decision.to_dict()["code"] == "TOOL_NOT_ALLOWED"
