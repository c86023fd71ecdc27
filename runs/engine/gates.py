"""The gate for one tool call: run it, ask a person first, or refuse it.

Pure. Resolution order: the run's policy (a read-only run refuses tools that
are not read-only) → the agent's override for the tool (``always_ask`` /
``never_ask``; an admin's override beats the code's) → the tenant's approval
rules → the default. By default, an agent with ``hitl.tools`` runs read-only
tools without asking and asks before any other tool on its first use in the
conversation; once a person approved a tool there, later calls run. An agent
without ``hitl.tools`` has no gates of its own.
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum


class Gate(StrEnum):
    RUN = "run"
    ASK = "ask"
    REFUSE = "refuse"


@dataclass(frozen=True, kw_only=True)
class GateDecision:
    gate: Gate
    reason: str
    # For REFUSE: the error code the model receives.
    code: str = ""

    def to_dict(self) -> dict[str, str]:
        data = {"gate": self.gate.value, "reason": self.reason}
        if self.code:
            data["code"] = self.code
        return data


TOOL_NOT_ALLOWED = "TOOL_NOT_ALLOWED"


def decide_gate(
    *,
    tool_id: str,
    tool_is_read_only: bool,
    read_only_run: bool,
    gates_enabled: bool,
    overrides: Mapping[str, str],
    admin_overrides: Collection[str] = (),
    approved_tools: Collection[str] = (),
) -> GateDecision:
    """Decide one call. ``overrides`` are in effect (admin over code); ``admin_overrides`` names
    the tools whose override an admin set, for the reason text."""
    if read_only_run and not tool_is_read_only:
        return GateDecision(
            gate=Gate.REFUSE,
            code=TOOL_NOT_ALLOWED,
            reason=f'run policy: this is a read-only run and tool "{tool_id}" is not read-only',
        )
    override = overrides.get(tool_id)
    if override is not None:
        source = "admin" if tool_id in admin_overrides else "agent code"
        gate = Gate.ASK if override == "always_ask" else Gate.RUN
        return GateDecision(gate=gate, reason=f"override {override} ({source})")
    if not gates_enabled:
        return GateDecision(gate=Gate.RUN, reason="default: the agent has no tool gates")
    if tool_is_read_only:
        return GateDecision(gate=Gate.RUN, reason="default: the tool is read-only")
    if tool_id in approved_tools:
        return GateDecision(gate=Gate.RUN, reason="default: approved earlier in this conversation")
    return GateDecision(gate=Gate.ASK, reason="default: first use of a tool that is not read-only")
