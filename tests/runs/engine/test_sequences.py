"""``after``: what a rule needs to have run before a call, judged without a database."""

import pytest

from kindgi.gates import RuleGate
from runs.engine.gates import CallFacts, CompiledRules, Rule, matching_rule, scopes_looked_back
from runs.engine.sequences import After, CallsSeen, Earlier

FETCHED = CallsSeen(tools=frozenset({"web.fetch"}), effects=frozenset({"network"}), outside_data=True)


@pytest.mark.parametrize(
    ("after", "earlier", "holds"),
    [
        ({"outsideData": True}, Earlier(run=FETCHED), True),
        ({"outsideData": True}, Earlier(conversation=FETCHED), False),
        ({"outsideData": True, "scope": "conversation"}, Earlier(conversation=FETCHED), True),
        ({"effect": "network"}, Earlier(run=FETCHED), True),
        ({"effect": "writes"}, Earlier(run=FETCHED), False),
        ({"toolPattern": "web.*"}, Earlier(run=FETCHED), True),
        (
            {"toolPattern": "mail.*", "scope": "conversation"},
            Earlier(run=FETCHED, conversation=FETCHED),
            False,
        ),
        ({"outsideData": True}, Earlier(), False),
    ],
)
def test_what_an_after_sees(after, earlier, holds):
    assert After.from_json(after).holds(earlier) is holds


def rule(rule_id: int, gate: RuleGate, **more) -> Rule:
    return Rule(id=rule_id, name=f"r{rule_id}", gate=gate, effect_kind="sensitive-data-egress", **more)


def test_a_rule_with_after_beats_the_same_rule_without_it_once_it_holds():
    lenient = rule(1, RuleGate.NEVER_ASK)
    after = rule(2, RuleGate.ALWAYS_ASK, after=After(outside_data=True))
    rules = CompiledRules([lenient, after])
    call = {"tool_id": "crm.export", "read_only": False, "effects": (("sensitive-data-egress", "crm"),)}
    assert matching_rule(rules, CallFacts(**call)) is lenient
    assert matching_rule(rules, CallFacts(**call, earlier=Earlier(run=FETCHED))) is after
    assert scopes_looked_back(rules) == {"run"}
    assert scopes_looked_back(CompiledRules([lenient])) == frozenset()
