"""Every branch of gate resolution, as a table, and the rules' precedence."""

import pytest

from kindgi.conditions import parse_condition
from runs.engine.gates import CallFacts, Gate, Override, Rule, RuleGate, decide_gate, matching_rule

POST = CallFacts(
    tool_id="acme-ops.post-update",
    agent_id="acme-ops.status-agent",
    read_only=False,
    effects=(("external-side-effect", "external:status-page"),),
    arguments={"message": "hi", "amountCents": 20000},
)
GREET = CallFacts(tool_id="acme-ops.greet", agent_id="acme-ops.status-agent", read_only=True)


def always_ask(source="agent code", **options):
    return Override(gate="always_ask", source=source, **options)


def never_ask(source="agent code", **options):
    return Override(gate="never_ask", source=source, **options)


def rule(gate, rule_id=1, **fields):
    return Rule(id=rule_id, name=f"rule {rule_id}", gate=RuleGate(gate), **fields)


BASE = {
    "call": POST,
    "read_only_run": False,
    "gates_enabled": True,
    "overrides": {},
    "rules": (),
    "approved_tools": (),
}
TOOL = POST.tool_id


@pytest.mark.parametrize(
    ("changes", "gate", "reason"),
    [
        # 1. the run's policy first, whatever overrides or rules say
        (
            {"read_only_run": True, "overrides": {TOOL: never_ask()}, "rules": [rule("never_ask")]},
            Gate.REFUSE,
            'run policy: this is a read-only run and tool "acme-ops.post-update" is not read-only',
        ),
        ({"read_only_run": True, "call": GREET}, Gate.RUN, "default: the tool is read-only"),
        # 2. the agent's override, from code or the admin, with or without a condition
        ({"overrides": {TOOL: always_ask()}}, Gate.ASK, "override always_ask (agent code)"),
        (
            {"overrides": {TOOL: always_ask()}, "approved_tools": {TOOL}},
            Gate.ASK,
            "override always_ask (agent code)",
        ),
        ({"overrides": {TOOL: never_ask("admin")}}, Gate.RUN, "override never_ask (admin)"),
        (
            {"overrides": {TOOL: never_ask()}, "rules": [rule("deny")]},
            Gate.RUN,
            "override never_ask (agent code)",
        ),
        (
            {"gates_enabled": False, "overrides": {TOOL: always_ask()}},
            Gate.ASK,
            "override always_ask (agent code)",
        ),
        (
            {
                "overrides": {
                    TOOL: always_ask(
                        "admin",
                        when=parse_condition("/amountCents > 10000").holds,
                        when_text="/amountCents > 10000",
                    )
                }
            },
            Gate.ASK,
            "override always_ask when /amountCents > 10000 (admin)",
        ),
        (
            {
                "gates_enabled": False,
                "overrides": {TOOL: always_ask(when=lambda args: args["amountCents"] > 50000)},
            },
            Gate.RUN,
            "default: the agent has no tool gates",
        ),
        (
            {"overrides": {TOOL: always_ask(when=lambda args: args["missing"])}},
            Gate.ASK,
            "override always_ask (agent code)",
        ),
        (
            {"overrides": {TOOL: never_ask(when=lambda args: args["missing"])}},
            Gate.ASK,
            "default: first use of a tool that is not read-only",
        ),
        # 3. the tenant's rules
        ({"rules": [rule("always_ask")], "approved_tools": {TOOL}}, Gate.ASK, 'rule "rule 1" (always_ask)'),
        ({"rules": [rule("ask_once")]}, Gate.ASK, 'rule "rule 1" (ask_once)'),
        (
            {"rules": [rule("ask_once")], "approved_tools": {TOOL}},
            Gate.RUN,
            'rule "rule 1" (ask_once), approved earlier in this conversation',
        ),
        ({"rules": [rule("never_ask")]}, Gate.RUN, 'rule "rule 1" (never_ask)'),
        (
            {"rules": [rule("deny", reason="Not during the freeze.")]},
            Gate.REFUSE,
            'rule "rule 1" (deny): Not during the freeze.',
        ),
        ({"gates_enabled": False, "rules": [rule("always_ask")]}, Gate.ASK, 'rule "rule 1" (always_ask)'),
        ({"call": GREET, "rules": [rule("always_ask")]}, Gate.ASK, 'rule "rule 1" (always_ask)'),
        # 4. the default
        ({"gates_enabled": False}, Gate.RUN, "default: the agent has no tool gates"),
        ({"call": GREET}, Gate.RUN, "default: the tool is read-only"),
        ({}, Gate.ASK, "default: first use of a tool that is not read-only"),
        ({"approved_tools": {TOOL}}, Gate.RUN, "default: approved earlier in this conversation"),
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
    assert decide_gate(**(BASE | {"read_only_run": True})).code == "TOOL_NOT_ALLOWED"
    assert decide_gate(**(BASE | {"rules": [rule("deny")]})).code == "TOOL_NOT_ALLOWED"


def test_an_asking_rule_says_who_may_decide_and_for_how_long():
    decision = decide_gate(
        **(
            BASE
            | {"rules": [rule("always_ask", 7, required_role="senior", ttl_seconds=60, reviewer_ids=(3, 4))]}
        )
    )
    assert decision.to_dict() == {
        "gate": "ask",
        "reason": 'rule "rule 7" (always_ask)',
        "requiredRole": "senior",
        "ttlSeconds": 60,
        "reviewerIds": [3, 4],
        "ruleId": 7,
    }


@pytest.mark.parametrize(
    ("fields", "matches"),
    [
        ({}, True),
        ({"tool_pattern": "acme-ops.*"}, True),
        ({"tool_pattern": "acme-ops.post-update"}, True),
        ({"tool_pattern": "my-pack.*"}, False),
        ({"agent_pattern": "acme-ops.status-*"}, True),
        ({"agent_pattern": "my-pack.*"}, False),
        ({"effect_kind": "external-side-effect"}, True),
        ({"effect_kind": "writes"}, False),
        ({"effect_kind": "external-side-effect", "resource_pattern": "external:*"}, True),
        ({"effect_kind": "external-side-effect", "resource_pattern": "external:orders"}, False),
        ({"resource_pattern": "external:status-page"}, True),
        ({"condition": parse_condition("/amountCents > 10000")}, True),
        ({"condition": parse_condition("/amountCents > 90000")}, False),
    ],
)
def test_what_a_rule_matches(fields, matches):
    assert rule("always_ask", **fields).matches(POST) is matches


def test_the_most_specific_rule_wins_then_the_stricter_then_the_older():
    any_tool = rule("never_ask", 1)
    pack_glob = rule("ask_once", 2, tool_pattern="acme-ops.*")
    exact = rule("always_ask", 3, tool_pattern="acme-ops.post-update")
    assert matching_rule([any_tool, pack_glob, exact], POST) is exact
    assert matching_rule([any_tool, pack_glob], POST) is pack_glob
    # the tool dimension outranks the agent dimension
    exact_agent = rule("deny", 4, agent_pattern="acme-ops.status-agent")
    assert matching_rule([exact_agent, pack_glob], POST) is pack_glob
    # the same specificity: the stricter gate, then the older rule
    lenient = rule("never_ask", 5, effect_kind="external-side-effect")
    strict = rule("deny", 6, effect_kind="external-side-effect")
    assert matching_rule([lenient, strict], POST) is strict
    older, newer = rule("always_ask", 8), rule("always_ask", 9)
    assert matching_rule([newer, older], POST) is older
    # a rule that does not match never wins
    assert matching_rule([rule("deny", 10, tool_pattern="my-pack.*")], POST) is None
