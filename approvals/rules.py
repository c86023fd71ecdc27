"""A tenant's approval rules, as the engine's gates read them."""

from approvals.models import ApprovalRule
from kindgi.conditions import parse_condition
from runs.engine.gates import Rule, RuleGate


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
        )
        for row in rows
    ]
