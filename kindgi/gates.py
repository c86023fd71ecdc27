"""The words for what a gate does with a call, defined once: a tenant's rule says one of
``RuleGate``; an agent, of its own tools (in code, or an admin for it), one of ``GateOverride``.
The engine, the models, the API and the admin all take them from here."""

from enum import StrEnum


class RuleGate(StrEnum):
    DENY = "deny"
    ALWAYS_ASK = "always_ask"
    ASK_ONCE = "ask_once"
    NEVER_ASK = "never_ask"


# Each, as a person reads it (the order is the rules form's).
RULE_GATE_LABELS = {
    RuleGate.ALWAYS_ASK: "always ask",
    RuleGate.ASK_ONCE: "ask on first use in a conversation",
    RuleGate.NEVER_ASK: "never ask",
    RuleGate.DENY: "deny (the model is told why)",
}


class GateOverride(StrEnum):
    """What an agent says about one of its tools, in code or in the admin: two of the rules' words."""

    ALWAYS_ASK = RuleGate.ALWAYS_ASK.value
    NEVER_ASK = RuleGate.NEVER_ASK.value


GATE_OVERRIDE_TEXT = ", ".join(gate.value for gate in GateOverride)
