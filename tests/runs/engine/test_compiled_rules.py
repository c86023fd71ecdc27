"""A tenant's compiled rules pick, for every call, exactly the rule the plain search picks."""

from hypothesis import given, settings
from hypothesis import strategies as st

from kindgi.conditions import parse_condition
from kindgi.gates import RuleGate
from runs.engine.gates import CallFacts, CompiledRules, Rule, matching_rule

TOOLS = ["acme.post", "acme.read", "acme.pay", "shop.read", "shop.write", "files.read-file"]
AGENTS = ["", "acme.agent", "shop.clerk", "shop.other"]
TOOL_PATTERNS = ["*", "", *TOOLS, "acme.*", "acme.p*", "shop.*", "*.read", "?cme.*", "[as]*", "acme-*"]
AGENT_PATTERNS = ["*", "", *AGENTS[1:], "shop.*", "*.agent"]
EFFECTS = [("writes", "external:orders"), ("reads", "shop:stock"), ("external-side-effect", "acme:status")]

rules = st.builds(
    lambda index, gate, tool, agent, kind, resource, condition: Rule(
        id=index,
        name=f"r{index}",
        gate=gate,
        tool_pattern=tool,
        agent_pattern=agent,
        effect_kind=kind,
        resource_pattern=resource,
        condition=parse_condition(condition) if condition else None,
    ),
    st.integers(1, 10_000),
    st.sampled_from(list(RuleGate)),
    st.sampled_from(TOOL_PATTERNS),
    st.sampled_from(AGENT_PATTERNS),
    st.sampled_from(["", "writes", "reads"]),
    st.sampled_from(["", "external:*", "shop:stock"]),
    st.sampled_from(["", "/amount > 10", '/label == "x"']),
)
calls = st.builds(
    CallFacts,
    tool_id=st.sampled_from(TOOLS),
    agent_id=st.sampled_from(AGENTS),
    read_only=st.booleans(),
    effects=st.lists(st.sampled_from(EFFECTS), max_size=2).map(tuple),
    arguments=st.sampled_from([None, {"amount": 5}, {"amount": 50}, {"label": "x"}]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(rules, max_size=40, unique_by=lambda rule: rule.id), st.lists(calls, min_size=1, max_size=10))
def test_the_compiled_rules_choose_as_the_plain_search_does(tenant_rules, judged):
    compiled = CompiledRules(tenant_rules)
    for call in judged:
        assert matching_rule(compiled, call) == matching_rule(list(tenant_rules), call)


def test_a_call_looks_only_at_the_rules_that_could_match_it():
    many = [
        Rule(id=i, name=f"r{i}", gate=RuleGate.ALWAYS_ASK, tool_pattern=f"pack{i}.tool") for i in range(1000)
    ]
    many.append(Rule(id=5000, name="any", gate=RuleGate.NEVER_ASK, agent_pattern="other.agent"))
    looked = []

    class Watching(Rule):
        def matches(self, call):
            looked.append(self.id)
            return super().matches(call)

    fields = ("id", "name", "gate", "tool_pattern", "agent_pattern")
    compiled = CompiledRules([Watching(**{name: getattr(rule, name) for name in fields}) for rule in many])
    call = CallFacts(tool_id="pack7.tool", agent_id="my.agent", read_only=False)
    assert matching_rule(compiled, call).id == 7
    assert looked == [7]
    looked.clear()
    assert (
        matching_rule(compiled, CallFacts(tool_id="nope.tool", agent_id="my.agent", read_only=False)) is None
    )
    assert looked == []  # nothing filed under that tool, that pack or that agent
