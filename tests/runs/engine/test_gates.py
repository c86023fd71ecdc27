"""Gate precedence as a table: every agent gate source against every tenant rule gate; then the
agent's own side, and the rules' matching and precedence."""

import pytest

from kindgi.conditions import parse_condition
from runs.engine.gates import (
    AgentGates,
    CallFacts,
    Gate,
    Override,
    Rule,
    RuleGate,
    decide_gate,
    matching_rule,
    strictest_ask,
)

POST = CallFacts(
    tool_id="acme-ops.post-update",
    agent_id="acme-ops.status-agent",
    read_only=False,
    effects=(("external-side-effect", "external:status-page"),),
    arguments={"message": "hi", "amountCents": 20000},
)
GREET = CallFacts(tool_id="acme-ops.greet", agent_id="acme-ops.status-agent", read_only=True)
TOOL = POST.tool_id


def always_ask(source="agent code", **options):
    return Override(gate="always_ask", source=source, **options)


def never_ask(source="agent code", **options):
    return Override(gate="never_ask", source=source, **options)


def rule(gate, rule_id=1, **fields):
    return Rule(id=rule_id, name=f"rule {rule_id}", gate=RuleGate(gate), **fields)


def hitl(**overrides) -> AgentGates:
    return AgentGates(enabled=True, overrides=overrides)


# The agent's side: (its gates, the call, the tools approved earlier in the conversation).
AGENT_SOURCES = {
    "flow step (no agent gate)": (None, POST, set()),
    "agent without hitl.tools": (AgentGates(enabled=False, overrides={}), POST, set()),
    "default, first use": (hitl(), POST, set()),
    "default, approved earlier": (hitl(), POST, {TOOL}),
    "default, read-only tool": (hitl(), GREET, set()),
    "code always_ask": (hitl(**{TOOL: always_ask()}), POST, set()),
    "code never_ask": (hitl(**{TOOL: never_ask()}), POST, set()),
    "admin always_ask": (hitl(**{TOOL: always_ask("admin")}), POST, set()),
    "admin never_ask": (hitl(**{TOOL: never_ask("admin")}), POST, set()),
}
# The tenant's side: the one rule that matches, if any. Asking rules need a senior reviewer.
ASKING = {"required_role": "senior", "ttl_seconds": 60, "reviewer_ids": (3,)}
TENANT_RULES = {
    "no rule": [],
    "deny": [rule("deny", reason="Not during the freeze.")],
    "always_ask": [rule("always_ask", **ASKING)],
    "ask_once": [rule("ask_once", **ASKING)],
    "never_ask": [rule("never_ask")],
}
R, A, X = Gate.RUN, Gate.ASK, Gate.REFUSE
# Rows: AGENT_SOURCES; columns: TENANT_RULES, in order.
EXPECTED = {
    "flow step (no agent gate)": (R, X, A, A, R),
    "agent without hitl.tools": (R, X, A, A, R),
    "default, first use": (A, X, A, A, A),
    "default, approved earlier": (R, X, A, R, R),
    "default, read-only tool": (R, X, A, A, R),
    "code always_ask": (A, X, A, A, A),
    "code never_ask": (R, X, A, A, R),
    "admin always_ask": (A, X, A, A, A),
    "admin never_ask": (R, X, A, A, R),
}
PAIRS = [
    (source, tenant, EXPECTED[source][column])
    for source in AGENT_SOURCES
    for column, tenant in enumerate(TENANT_RULES)
]


def test_the_table_covers_every_pair():
    assert set(EXPECTED) == set(AGENT_SOURCES)
    assert len(PAIRS) == len(AGENT_SOURCES) * len(TENANT_RULES) == 45


@pytest.mark.parametrize(("source", "tenant", "expected"), PAIRS)
def test_the_stricter_of_the_agents_gate_and_the_tenants_wins(source, tenant, expected):
    agent, call, approved = AGENT_SOURCES[source]
    decision = decide_gate(call=call, agent=agent, rules=TENANT_RULES[tenant], approved_tools=approved)
    assert decision.gate == expected
    if expected == Gate.REFUSE:
        # A tenant's deny wins whatever the agent says, and says why.
        assert (decision.code, decision.rule_name, decision.rule_reason) == (
            "TOOL_NOT_ALLOWED",
            "rule 1",
            "Not during the freeze.",
        )
    elif expected == Gate.ASK and decision.rule_id is not None:
        # The tenant asks: its role, TTL and reviewers hold, whatever the agent's own ask said.
        assert (decision.required_role, decision.ttl_seconds, decision.reviewer_ids) == ("senior", 60, (3,))
    elif expected == Gate.ASK:
        assert (decision.required_role, decision.ttl_seconds, decision.reviewer_ids) == ("", None, ())


@pytest.mark.parametrize(
    ("agent", "rules", "reason"),
    [
        (
            hitl(**{TOOL: always_ask()}),
            [rule("always_ask")],
            'override always_ask (agent code); rule "rule 1" (always_ask)',
        ),
        (hitl(**{TOOL: never_ask()}), [rule("always_ask")], 'rule "rule 1" (always_ask)'),
        (
            hitl(**{TOOL: never_ask()}),
            [rule("never_ask")],
            'override never_ask (agent code); rule "rule 1" (never_ask)',
        ),
        (hitl(**{TOOL: always_ask()}), [rule("deny")], 'rule "rule 1" (deny)'),
        (None, [], "no gate: a flow step that no rule matches"),
        (hitl(), [], "default: first use of a tool that is not read-only"),
    ],
)
def test_the_reason_names_every_side_that_decided(agent, rules, reason):
    assert decide_gate(call=POST, agent=agent, rules=rules).reason == reason


def test_a_code_ask_does_not_hide_a_tenant_rules_role_or_its_reviewers():
    decision = decide_gate(
        call=POST,
        agent=hitl(**{TOOL: always_ask()}),
        rules=[rule("always_ask", 7, required_role="admin", ttl_seconds=30, reviewer_ids=(3, 4))],
    )
    assert decision.to_dict() == {
        "gate": "ask",
        "reason": 'override always_ask (agent code); rule "rule 7" (always_ask)',
        "requiredRole": "admin",
        "ttlSeconds": 30,
        "reviewerIds": [3, 4],
        "ruleId": 7,
        "ruleName": "rule 7",
    }


@pytest.mark.parametrize(
    ("agent", "gate", "reason"),
    [
        (
            hitl(
                **{
                    TOOL: always_ask(
                        "admin",
                        when=parse_condition("/amountCents > 10000").holds,
                        when_text="/amountCents > 10000",
                    )
                }
            ),
            Gate.ASK,
            "override always_ask when /amountCents > 10000 (admin)",
        ),
        (
            AgentGates(
                enabled=False, overrides={TOOL: always_ask(when=lambda args: args["amountCents"] > 50000)}
            ),
            Gate.RUN,
            "default: the agent has no tool gates",
        ),
        (
            AgentGates(enabled=False, overrides={TOOL: always_ask()}),
            Gate.ASK,
            "override always_ask (agent code)",
        ),
        # A condition that breaks must not open a gate: an ask applies, a never_ask does not.
        (
            hitl(**{TOOL: always_ask(when=lambda args: args["missing"])}),
            Gate.ASK,
            "override always_ask (agent code)",
        ),
        (
            hitl(**{TOOL: never_ask(when=lambda args: args["missing"])}),
            Gate.ASK,
            "default: first use of a tool that is not read-only",
        ),
    ],
)
def test_an_override_with_a_condition_applies_only_when_it_holds(agent, gate, reason):
    decision = decide_gate(call=POST, agent=agent)
    assert (decision.gate, decision.reason) == (gate, reason)


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


def test_a_flow_steps_call_matches_rules_for_any_agent_only():
    step = CallFacts(tool_id=TOOL, read_only=False)
    assert rule("deny").matches(step)
    assert not rule("deny", agent_pattern="acme-ops.*").matches(step)


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


ROLES = ("standard", "senior", "admin")


@pytest.mark.parametrize(
    ("gates", "needs"),
    [
        ([], {}),
        ([{"gate": "ask", "reason": "first use"}], {}),
        (
            [
                {"requiredRole": "admin", "reviewerIds": [7, 8], "requiredApprovals": 2},
                {"requiredRole": "senior"},
            ],
            {"requiredRole": "admin", "reviewerIds": [7, 8], "requiredApprovals": 2},
        ),
        # The highest role and the most approvals, whichever gate they come from.
        (
            [{"requiredRole": "senior"}, {"requiredRole": "admin", "requiredApprovals": 3}],
            {"requiredRole": "admin", "requiredApprovals": 3},
        ),
        # Named reviewers: the first gate's if it names any, else the next's.
        ([{"reviewerIds": [7]}, {"reviewerIds": [5, 6]}], {"reviewerIds": [7]}),
        (
            [{"requiredRole": "admin"}, {"reviewerIds": [5, 6]}],
            {"requiredRole": "admin", "reviewerIds": [5, 6]},
        ),
        # A role the order does not know outranks those it knows: nobody may decide it (fail closed).
        ([{"requiredRole": "admin"}, {"requiredRole": "boss"}], {"requiredRole": "boss"}),
    ],
)
def test_the_strictest_ask_needs_at_least_what_each_gate_needs(gates, needs):
    assert strictest_ask(gates, roles=ROLES) == needs


def test_which_role_is_higher_is_the_orders_given():
    gates = [{"requiredRole": "admin"}, {"requiredRole": "standard"}]
    assert strictest_ask(gates, roles=ROLES) == {"requiredRole": "admin"}
    assert strictest_ask(gates, roles=tuple(reversed(ROLES))) == {"requiredRole": "standard"}
