"""Budgets: a rule that holds a total across calls ("no more than 100,000 paid out in a run,
however many calls it takes").

A rule's ``budget`` counts the calls it matches in a scope (the run, the conversation, the
principal, the agent or the tenant), over a window of seconds or the scope's whole life: how
many (``maxCalls``) and the sum of one argument (``sumOf`` + ``maxSum``). A call within the
budget takes the rule's gate; one that would take the scope over it takes ``overBudget``
instead (``always_ask`` or ``deny``), and the reviewer is told the budget's use.

A call counts from the moment it passes the gate (charged to the ledger, which checks and
records under a lock on the budget's scope, so that concurrent calls cannot all fit), and stops
counting if the policy then refuses it; a call a person approves counts even over the budget.
The kernel decides; the driver's ``BudgetLedger`` remembers.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from kindgi.conditions import value_at
from kindgi.gates import RuleGate

SCOPES = ("run", "conversation", "principal", "agent", "tenant")
OVER_BUDGET = (RuleGate.ALWAYS_ASK.value, RuleGate.DENY.value)
KEYS = ("scope", "windowSeconds", "maxCalls", "sumOf", "maxSum", "overBudget")
# A window longer than this is a scope's whole life, said another way.
WINDOW_MAX = 10 * 365 * 24 * 3600
_SCOPE_WORDS = {
    "run": "in this run",
    "conversation": "in this conversation",
    "principal": "for this run's principal",
    "agent": "for this agent",
    "tenant": "in this tenant",
}


class BudgetError(ValueError):
    """Why a rule's ``budget`` is not one, in words for whoever wrote it."""


def _whole(value: Any, name: str, *, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= high:
        raise BudgetError(f"{name}: a whole number from 1 to {high:,}")
    return value


@dataclass(frozen=True, kw_only=True)
class Budget:
    scope: str
    window_seconds: int | None = None
    max_calls: int | None = None
    sum_of: str = ""
    max_sum: float | None = None
    over_budget: str = RuleGate.ALWAYS_ASK.value

    @classmethod
    def from_json(cls, data: Any) -> "Budget":
        if not isinstance(data, Mapping):
            raise BudgetError('an object such as {"scope": "run", "sumOf": "/amountCents", "maxSum": 100000}')
        unknown = sorted(set(data) - set(KEYS))
        if unknown:
            raise BudgetError(f"{', '.join(unknown)}: not known (one of {', '.join(KEYS)})")
        if data.get("scope") not in SCOPES:
            raise BudgetError(f"scope: one of {', '.join(SCOPES)}")
        window = data.get("windowSeconds")
        max_calls = data.get("maxCalls")
        sum_of, max_sum = data.get("sumOf"), data.get("maxSum")
        if max_calls is None and sum_of is None:
            raise BudgetError("says how much: maxCalls, or sumOf with maxSum, or both")
        if (sum_of is None) != (max_sum is None):
            raise BudgetError("sumOf and maxSum come together: the argument to add up, and its most")
        if sum_of is not None and (
            not isinstance(sum_of, str) or not sum_of.startswith("/") or len(sum_of) > 200
        ):
            raise BudgetError("sumOf: a JSON pointer to a number in the arguments, such as /amountCents")
        if max_sum is not None and (
            isinstance(max_sum, bool) or not isinstance(max_sum, int | float) or not 0 < max_sum < 1e15
        ):
            raise BudgetError("maxSum: a number above 0")
        over = data.get("overBudget", RuleGate.ALWAYS_ASK.value)
        if over not in OVER_BUDGET:
            raise BudgetError(f"overBudget: one of {', '.join(OVER_BUDGET)}")
        return cls(
            scope=data["scope"],
            window_seconds=None if window is None else _whole(window, "windowSeconds", high=WINDOW_MAX),
            max_calls=None if max_calls is None else _whole(max_calls, "maxCalls", high=1_000_000_000),
            sum_of=sum_of or "",
            max_sum=max_sum,
            over_budget=over,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"scope": self.scope}
        if self.window_seconds is not None:
            data["windowSeconds"] = self.window_seconds
        if self.max_calls is not None:
            data["maxCalls"] = self.max_calls
        if self.sum_of:
            data |= {"sumOf": self.sum_of, "maxSum": self.max_sum}
        return data | {"overBudget": self.over_budget}

    def where(self) -> str:
        """Its scope and window in words: "in this run", "for this agent in the last 3,600 s"."""
        window = f" in the last {self.window_seconds:,} s" if self.window_seconds else ""
        return _SCOPE_WORDS[self.scope] + window


@dataclass(frozen=True, kw_only=True)
class Charge:
    """One call charged to one rule's budget in one scope (``key``: which run, conversation,
    principal, agent or tenant)."""

    rule_id: int
    budget: Budget
    key: str
    call_id: str
    # What the call adds to the sum (0 for a budget that counts calls only).
    amount: float = 0


@dataclass(frozen=True, kw_only=True)
class BudgetUse:
    """What the scope had used before the call, and whether the call fits."""

    calls: int
    total: float
    fits: bool

    def describe(self, charge: Charge) -> str:
        """ "4,000 of 5,000 used in this run; this call 2,000", or "3 of 3 calls in this run"."""
        budget = charge.budget
        parts = []
        if budget.sum_of and budget.max_sum is not None:
            parts.append(
                f"{_number(self.total)} of {_number(budget.max_sum)} used {budget.where()}; "
                f"this call {_number(charge.amount)}"
            )
        if budget.max_calls is not None:
            parts.append(f"{self.calls:,} of {budget.max_calls:,} calls {budget.where()}")
        return "; ".join(parts)


class BudgetLedger(Protocol):
    """Where the budgets' use is kept (the driver's database). Each method is safe to repeat for
    the same call: a call is charged once."""

    def use(self, charge: Charge) -> BudgetUse:
        """What the scope used before this call (leaving it out), and whether it would fit."""

    def charge(self, charge: Charge, *, even_over: bool = False) -> BudgetUse:
        """Charge the call if it fits (or ``even_over``), atomically with the check."""

    def release(self, charge: Charge) -> None:
        """The call will not run: it stops counting."""


def amount_of(budget: Budget, arguments: Any) -> float | None:
    """What a call adds to the budget's sum: the number at ``sumOf`` in its arguments (0 for a
    budget that counts calls only); None when it cannot be measured (it is then over budget:
    fail closed)."""
    if not budget.sum_of:
        return 0
    return measured(arguments, budget.sum_of)


def measured(arguments: Any, pointer: str) -> float | None:
    """The amount at ``pointer`` in a call's arguments: a finite number of zero or more, else
    None. A negative amount would hand back what other calls used (a "refund" of -1,000,000
    would make room for a million more), so it is no amount."""
    value = value_at(arguments if isinstance(arguments, Mapping) else {}, pointer)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        if not math.isfinite(value) or value < 0:
            return None
        float(value)
    except OverflowError:  # an integer too long for any float: not an amount a budget can add
        return None
    return value


def fits(budget: Budget, *, calls: int, total: float, amount: float) -> bool:
    if budget.max_calls is not None and calls + 1 > budget.max_calls:
        return False
    return budget.max_sum is None or total + amount <= budget.max_sum


def scope_key(budget: Budget, *, run_id: str, conversation_id: str, principal: str, agent_id: str) -> str:
    match budget.scope:
        case "run":
            return f"run:{run_id}"
        case "conversation":
            return f"conversation:{conversation_id or run_id}"
        case "principal":
            return f"principal:{principal}"
        case "agent":
            return f"agent:{agent_id}"
    return "tenant"


def _number(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,}"
