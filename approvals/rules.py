"""A tenant's approval rules: what makes one valid, and how the engine's gates read them."""

from collections.abc import Iterable, Mapping
from typing import Any

from approvals.escalation_steps import escalation_error
from approvals.models import ApprovalRule
from approvals.roles import is_role, reviewer_roles
from audit.actions import SettingKind
from core.bounds import SECONDS_MAX, whole_number_error
from kindgi.conditions import ConditionError, parse_condition
from kindgi.effects import EffectKind
from kindgi.gates import RuleGate
from runs.engine.budgets import Budget, BudgetError
from runs.engine.gates import Rule
from runs.engine.sequences import After, AfterError


def rules_of_tenant(tenant_id) -> list[Rule]:
    rows = ApprovalRule.objects.filter(tenant_id=tenant_id, enabled=True).prefetch_related("reviewers")
    return [
        Rule(
            id=row.pk,
            name=row.name,
            gate=RuleGate(row.gate),
            tool_pattern=row.tool_pattern or "*",
            agent_pattern=row.agent_pattern or "*",
            effect_kind=row.effect_kind,
            resource_pattern=row.resource_pattern,
            condition=parse_condition(row.condition) if row.condition else None,
            required_role=row.required_role,
            reason=row.reason,
            ttl_seconds=row.ttl_seconds,
            reviewer_ids=tuple(sorted(user.pk for user in row.reviewers.all())),
            required_approvals=row.required_approvals,
            after=After.from_json(row.after) if row.after else None,
            budget=Budget.from_json(row.budget) if row.budget else None,
            step_up=row.step_up,
        )
        for row in rows
    ]


RULE_FIELDS = (
    "name",
    "enabled",
    "tool_pattern",
    "agent_pattern",
    "effect_kind",
    "resource_pattern",
    "condition",
    "gate",
    "required_role",
    "ttl_seconds",
    "reason",
    "required_approvals",
    "step_up",
    "escalation",
    "after",
    "budget",
)


def rule_snapshot(rule: ApprovalRule) -> dict[str, Any]:
    """What the audit keeps of a saved rule: its fields, and its named reviewers by username."""
    return {name: getattr(rule, name) for name in RULE_FIELDS} | {
        "reviewers": sorted(user.get_username() for user in rule.reviewers.all())
    }


RULE = SettingKind(noun="rule", snapshot=rule_snapshot, label=lambda rule: rule.name)

# A call may need at most this many distinct reviewers' approvals.
MAX_REQUIRED_APPROVALS = 5


def rule_errors(fields: Mapping[str, Any], *, tenant, reviewers: Iterable | None = None) -> dict[str, str]:
    """What is wrong with a rule of ``tenant`` holding ``fields`` (model field names) and naming
    ``reviewers``, by field; empty when nothing is. The admin's form and the API both ask this,
    and ``approvals.actions.rules.check_save_rule`` asks it again before saving."""
    errors = {}
    effect_kind = fields.get("effect_kind") or ""
    if effect_kind and effect_kind not in {kind.value for kind in EffectKind}:
        errors["effect_kind"] = f"not one of: {', '.join(kind.value for kind in EffectKind)}"
    required_role = fields.get("required_role") or ""
    if required_role and not is_role(required_role):
        errors["required_role"] = f"not one of: {', '.join(reviewer_roles())}"
    if fields.get("gate") not in ApprovalRule.Gate.values:
        errors["gate"] = f"not one of: {', '.join(ApprovalRule.Gate.values)}"
    if condition := fields.get("condition") or "":
        try:
            parse_condition(condition)
        except ConditionError as error:
            errors["condition"] = str(error)
    strangers = [
        user.get_username()
        for user in reviewers or ()
        if getattr(user, "membership", None) is None or user.membership.tenant_id != tenant.pk
    ]
    if strangers:
        errors["reviewers"] = f"not members of {tenant}: {', '.join(strangers)}"
    needed = fields.get("required_approvals")
    if needed is None:
        needed = 1
    if isinstance(needed, bool) or not isinstance(needed, int) or not 1 <= needed <= MAX_REQUIRED_APPROVALS:
        errors["required_approvals"] = f"a whole number from 1 to {MAX_REQUIRED_APPROVALS}"
    elif reviewers and needed > len(list(reviewers)):
        errors["required_approvals"] = (
            f"{needed} approvals from distinct reviewers, but the rule names only {len(list(reviewers))}"
        )
    ttl = fields.get("ttl_seconds")
    if ttl is not None and (problem := whole_number_error(ttl, low=1, high=SECONDS_MAX)):
        errors["ttl_seconds"] = f"{problem} (seconds), or empty for the site's default"
    escalation = fields.get("escalation")
    if problem := escalation_error([] if escalation is None else escalation, tenant=tenant):
        errors["escalation"] = problem
    if (after := fields.get("after")) is not None:
        try:
            After.from_json(after)
        except AfterError as error:
            errors["after"] = str(error)
    if (budget := fields.get("budget")) is not None:
        try:
            Budget.from_json(budget)
        except BudgetError as error:
            errors["budget"] = str(error)
        else:
            if fields.get("gate") == RuleGate.DENY:
                errors["budget"] = "a deny rule refuses every call it matches: a budget would change nothing"
    return errors
