"""What a call adds to a budget's or a grant's sum: a number of zero or more at the pointer.
A negative amount would give the budget back what other calls used, so it is measured as
nothing measurable, and fails closed (over budget; no grant covers it). A tool whose schema
lets a negative number through (a refund, a correction) is exactly where this matters."""

import pytest

from runs.engine.budgets import Budget, amount_of
from runs.engine.gates import CallFacts
from runs.engine.grants import Grant

BUDGET = Budget.from_json({"scope": "run", "sumOf": "/amountCents", "maxSum": 1000})


@pytest.mark.parametrize(
    ("amount", "measured"),
    [
        (600, 600),
        (0, 0),
        (2.5, 2.5),
        (-600, None),
        (-0.01, None),
        (float("inf"), None),
        (float("nan"), None),
        (10**400, None),  # no float holds it: measured as nothing, not a crash
    ],
)
def test_a_budget_measures_numbers_of_zero_or_more(amount, measured):
    found = amount_of(BUDGET, {"amountCents": amount})
    assert found == measured


@pytest.mark.parametrize(("amount", "measured"), [(600, 600), (0, 0), (-600, None), (float("nan"), None)])
def test_a_grant_with_a_sum_measures_numbers_of_zero_or_more(amount, measured):
    grant = Grant(
        id=1, granter_id="1", granter_name="rita", granter_role="admin", tool_pattern="*", sum_of="/a"
    )
    call = CallFacts(tool_id="t", agent_id="a", read_only=False, effects=(), arguments={"a": amount})
    assert grant.amount(call) == measured
