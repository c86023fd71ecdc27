"""What the approvals API holds beyond each field alone, stated in its schema."""

from copy import deepcopy

from approvals.models import DecisionKind

# Blank once trimmed is no rationale; a NUL is refused in any JSON body.
RATIONALE = {"type": "string", "minLength": 1, "pattern": r"[^\s\u0000]"}


def state_what_a_decision_holds(result, generator, request, public):
    """A decision body is one of two shapes: an approval, whose rationale may be left out, or a
    rejection or request for changes, which needs one (``approvals.actions.decisions`` refuses
    it without)."""
    schemas = result.get("components", {}).get("schemas", {})
    # Not a bulk decision's items: there one refused item is a result, not a refused body.
    if "CompleteApprovalRequest" in schemas:
        decision = schemas["CompleteApprovalRequest"]
        approval, rejection = deepcopy(decision), deepcopy(decision)
        approval["properties"]["decision"] = {"type": "string", "enum": [DecisionKind.APPROVE.value]}
        rejection["properties"]["decision"] = {
            "type": "string",
            "enum": [DecisionKind.REJECT.value, DecisionKind.REQUEST_CHANGES.value],
        }
        rejection["properties"]["rationale"] = RATIONALE | {
            "description": "Why it is rejected; or, requesting changes, what the model should change "
            "(it reads this as the call's result)."
        }
        del rejection["properties"]["arguments"]  # only an approval changes them
        rejection["properties"].pop("allow", None)  # nor allows calls like it
        rejection["required"] = sorted({*decision.get("required", ()), "rationale"})
        approval.pop("description", None)
        rejection.pop("description", None)
        schemas["CompleteApprovalRequest"] = {
            "description": "An approval (rationale optional), or a rejection or a request for changes "
            "(rationale required).",
            "oneOf": [approval, rejection],
        }
    return result
