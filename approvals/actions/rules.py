"""Writing a tenant's approval rules, by whoever may change its configuration."""

from collections.abc import Iterable, Mapping
from typing import Any

from django.db import transaction

from approvals.exceptions import (
    ApprovalInputError,
)
from approvals.models import (
    ApprovalRule,
)
from approvals.rules import RULE, RULE_FIELDS, rule_errors
from audit.actions import do_delete_setting, do_save_setting
from runs.engine.budgets import Budget
from runs.engine.sequences import After
from tenants.authority import check_may_configure

# What a refused configuration change names.
RULES = "{tenant}'s approval rules"


def check_save_rule(
    *,
    tenant,
    fields: Mapping[str, Any],
    reviewers: Iterable | None = None,
    rule: ApprovalRule | None = None,
    acting_user,
    surface: str,
) -> ApprovalRule:
    """Create a rule of ``tenant`` (``rule`` None, or not saved yet), or change ``rule`` (only the
    ``fields`` given, and its reviewers if given): the one way rules are written, from the API,
    the console and the admin alike, by whoever may change the tenant's configuration."""
    check_may_configure(acting_user, tenant, what=RULES.format(tenant=tenant.slug), surface=surface)
    unknown = sorted(set(fields) - set(RULE_FIELDS))
    if unknown:
        raise ApprovalInputError([f"/{name}: not a field of a rule" for name in unknown])
    current = {name: getattr(rule, name) for name in RULE_FIELDS} if rule is not None else {}
    merged = current | dict(fields)
    if merged.get("escalation") is None:
        merged["escalation"] = []  # a form's empty field: no steps
    reviewers = list(reviewers) if reviewers is not None else None
    kept = (
        reviewers if reviewers is not None or rule is None or rule.pk is None else list(rule.reviewers.all())
    )
    if errors := rule_errors(merged, tenant=tenant, reviewers=kept):
        raise ApprovalInputError([f"/{field}: {message}" for field, message in errors.items()])
    # Kept as the API shows them: with their defaults said (a scope, an overBudget).
    if merged.get("after"):
        merged["after"] = After.from_json(merged["after"]).to_json()
    if merged.get("budget"):
        merged["budget"] = Budget.from_json(merged["budget"]).to_json()
    return do_save_rule(
        tenant=tenant, fields=merged, reviewers=reviewers, rule=rule, acting_user=acting_user, surface=surface
    )


# Not durable: the admin saves inside a transaction of its own.
@transaction.atomic
def do_save_rule(
    *,
    tenant,
    fields: Mapping[str, Any],
    reviewers: list | None,
    rule: ApprovalRule | None,
    acting_user,
    surface: str,
) -> ApprovalRule:
    """Write a valid rule, and its record in the tenant's audit chain."""
    rule = rule or ApprovalRule(tenant=tenant)
    for name, value in fields.items():
        setattr(rule, name, value)
    rule.tenant = tenant

    def save() -> None:
        rule.save()
        if reviewers is not None:
            rule.reviewers.set(reviewers)

    return do_save_setting(
        rule, kind=RULE, tenant=tenant, acting_user=acting_user, surface=surface, save=save
    )


def check_delete_rule(rule: ApprovalRule, *, acting_user, surface: str) -> None:
    """Delete one of a tenant's rules, by whoever may change its configuration."""
    tenant = rule.tenant
    check_may_configure(acting_user, tenant, what=RULES.format(tenant=tenant.slug), surface=surface)
    do_delete_setting(rule, kind=RULE, tenant=tenant, acting_user=acting_user, surface=surface)
