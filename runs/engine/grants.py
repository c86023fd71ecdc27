"""Standing grants: a reviewer's bounded permission, given once instead of call by call ("allow
calls like this for 2 hours, up to 10").

A grant covers the calls of a tool (glob) by an agent (glob), optionally only when a condition
holds on the arguments, for one principal's runs or one agent's. It turns a gate that asks into
one that runs, within its limits: never a refusal, never a call that needs a higher role than the
granter's, named reviewers the granter is not among, or more than one approval, and never a
call of the granter's own run under four-eyes. Each use is counted, atomically with the check of
the grant's limits, by the driver's ``GrantKeeper``: a grant revoked, expired or used up covers
nothing from the next call on.
"""

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from kindgi.conditions import Condition
from runs.engine.budgets import measured
from runs.engine.gates import CallFacts, Gate, GateDecision, role_rank
from runs.engine.state import RunFacts

PRINCIPAL = "principal"
AGENT = "agent"
SCOPES = (PRINCIPAL, AGENT)


@dataclass(frozen=True, kw_only=True)
class Grant:
    id: int
    granter_id: str
    granter_name: str
    # The granter's reviewer role when the grant was read ("" if they are no reviewer now).
    granter_role: str
    tool_pattern: str
    agent_pattern: str = "*"
    condition: Condition | None = None
    scope: str = PRINCIPAL
    # The principal's user id, or the agent's id, whose calls it covers.
    scope_value: str = ""
    # The argument a grant with a sum adds up (its most is the keeper's to hold).
    sum_of: str = ""

    def covers(
        self,
        call: CallFacts,
        run: RunFacts,
        gate: GateDecision,
        *,
        roles: Sequence[str],
        four_eyes: bool,
    ) -> bool:
        """Whether this grant may let ``call`` run in place of ``gate`` (an ask)."""
        if gate.gate != Gate.ASK or gate.required_approvals > 1 or gate.step_up:
            return False
        if gate.reviewer_ids and int(self.granter_id) not in gate.reviewer_ids:
            return False
        needed = gate.required_role or (roles[0] if roles else "")
        if not self.granter_role or role_rank(self.granter_role, roles) < role_rank(needed, roles):
            return False
        if four_eyes and run.principal == self.granter_id:
            return False
        if not fnmatch.fnmatchcase(call.tool_id, self.tool_pattern or "*"):
            return False
        if not fnmatch.fnmatchcase(call.agent_id, self.agent_pattern or "*"):
            return False
        if self.scope == PRINCIPAL and run.principal != self.scope_value:
            return False
        if self.scope == AGENT and call.agent_id != self.scope_value:
            return False
        if self.sum_of and self.amount(call) is None:
            return False  # it cannot be measured against the grant's most
        return self.condition is None or self.condition.holds(call.arguments or {})

    def amount(self, call: CallFacts) -> float | None:
        """What the call adds to the grant's sum (None: not measurable, so not covered)."""
        return measured(call.arguments or {}, self.sum_of) if self.sum_of else 0


class GrantKeeper(Protocol):
    """Where the grants' uses are counted (the driver's database)."""

    def use(self, grant: Grant, *, run_id: str, call_id: str, amount: float, needed_role: str) -> bool:
        """Count one use of ``grant`` by the call, if the grant still holds (not revoked, not
        expired, its granter still a reviewer of ``needed_role`` or higher, its calls and sum not
        used up), atomically with those checks. A call already counted is counted once."""

    def release(self, grant_id: int, *, run_id: str, call_id: str) -> None:
        """The call a grant let run will not run after all (a guardrail refused it, the run
        ended before it): its use is given back. Nothing happens for a use never counted."""
