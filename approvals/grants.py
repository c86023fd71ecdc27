"""The tenant's standing grants as the engine reads them, and their uses counted: each use is
checked against the grant as it stands (revoked, expired, its granter's role, its calls and sum)
and written in one transaction under the grant row's lock, so that concurrent calls cannot
together pass its limits."""

from collections.abc import Collection

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from approvals.models import Grant, GrantUse, Reviewer
from approvals.roles import may_decide
from kindgi.conditions import parse_condition
from runs.engine import grants


class Grants:
    """A tenant's grants for ``runs.grants``."""

    def grants_of_tenant(self, tenant_id) -> list[grants.Grant]:
        rows = list(
            Grant.objects.filter(tenant_id=tenant_id, revoked_at__isnull=True, expires_at__gt=timezone.now())
            .select_related("granter")
            .order_by("expires_at", "pk")
        )
        roles = dict(
            Reviewer.objects.filter(
                tenant_id=tenant_id, user_id__in={row.granter_id for row in rows}
            ).values_list("user_id", "role")
        )
        return [
            grants.Grant(
                id=row.pk,
                granter_id=str(row.granter_id),
                granter_name=row.granter.get_username(),
                granter_role=roles.get(row.granter_id, ""),
                tool_pattern=row.tool_pattern,
                agent_pattern=row.agent_pattern or "*",
                condition=parse_condition(row.condition) if row.condition else None,
                scope=row.scope,
                scope_value=str(row.principal_id) if row.scope == Grant.Scope.PRINCIPAL else row.agent_id,
                sum_of=row.sum_of,
            )
            for row in rows
        ]

    def use(self, grant: grants.Grant, *, run_id: str, call_id: str, amount: float, needed_role: str) -> bool:
        with transaction.atomic():
            row = (
                Grant.objects.select_for_update(of=("self",))
                .select_related("granter")
                .filter(pk=grant.id)
                .first()
            )
            if row is None or not row.granter.is_active:
                return False
            if GrantUse.objects.filter(grant=row, run_id=run_id, call_id=call_id).exists():
                return True  # this call was let run by it already: a replay
            if row.status_at(timezone.now()) != "active":
                return False
            if row.max_calls is not None and row.uses + 1 > row.max_calls:
                return False
            if row.max_sum is not None and row.used_sum + amount > row.max_sum:
                return False
            role = Reviewer.objects.filter(user_id=row.granter_id, tenant_id=row.tenant_id).values_list(
                "role", flat=True
            )
            if not role or not may_decide(role[0], needed_role):
                return False  # no longer a reviewer, or no longer of the role the call needs
            GrantUse.objects.create(grant=row, run_id=run_id, call_id=call_id, amount=amount)
            # An update, not a save: a use is no change of the tenant's configuration.
            Grant.objects.filter(pk=row.pk).update(uses=F("uses") + 1, used_sum=F("used_sum") + amount)
            return True

    def release(self, grant_id: int, *, run_id: str, call_id: str) -> None:
        with transaction.atomic():
            row = Grant.objects.select_for_update(of=("self",)).filter(pk=grant_id).first()
            if row is None:
                return
            use = GrantUse.objects.filter(grant=row, run_id=run_id, call_id=call_id).first()
            if use is None:
                return
            use.delete()
            Grant.objects.filter(pk=row.pk).update(uses=F("uses") - 1, used_sum=F("used_sum") - use.amount)

    def release_uncalled(self, run_id, called: Collection[str]) -> None:
        for grant_id, call_id in (
            GrantUse.objects.filter(run_id=run_id)
            .exclude(call_id__in=called)
            .values_list("grant_id", "call_id")
        ):
            self.release(grant_id, run_id=run_id, call_id=call_id)
