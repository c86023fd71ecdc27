"""Giving and revoking standing grants: the one way they are written, from the API, the CLI, the
console and a decision that approves "and allows calls like this".

A reviewer gives a grant in their own name; it covers only what they could approve themselves
(``runs.engine.grants`` holds that at each use). Reviewers see and revoke their own grants; a
tenant admin, every grant of the tenant. Each grant and each revocation is in the tenant's
audit chain.
"""

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from approvals.exceptions import ApprovalInputError, GrantForbiddenError, GrantNotFoundError
from approvals.models import Approval, Grant, Reviewer
from audit.actions import SettingKind, do_save_setting
from core.conf import setting
from kindgi.conditions import ConditionError, parse_condition
from tenants.authority import check_may_manage, configure_refusal
from tenants.selectors import is_service_account

FIELDS = (
    "toolPattern",
    "agentPattern",
    "condition",
    "scope",
    "principal",
    "agentId",
    "maxCalls",
    "sumOf",
    "maxSum",
    "expiresAt",
    "forSeconds",
)


def grant_snapshot(grant: Grant) -> dict[str, Any]:
    """What the audit keeps of a grant."""
    return {
        "granter": grant.granter.get_username(),
        "toolPattern": grant.tool_pattern,
        "agentPattern": grant.agent_pattern,
        "condition": grant.condition,
        "scope": grant.scope,
        "principal": grant.principal.get_username() if grant.principal_id else None,
        "agentId": grant.agent_id,
        "maxCalls": grant.max_calls,
        "sumOf": grant.sum_of,
        "maxSum": grant.max_sum,
        "expiresAt": grant.expires_at.isoformat(),
        "approval": str(grant.approval_id) if grant.approval_id else None,
        "revokedAt": grant.revoked_at.isoformat() if grant.revoked_at else None,
    }


GRANT = SettingKind(noun="grant", snapshot=grant_snapshot, label=lambda grant: f"grant {grant.pk}")


def check_create_grant(
    *, tenant, acting_user, fields: Mapping[str, Any], surface: str, approval: Approval | None = None
) -> Grant:
    """Give a grant in ``acting_user``'s name, who must be a reviewer of ``tenant``. ``fields``:
    the API's names (``FIELDS``); every one is checked, and a refused grant writes nothing."""
    reviewer = Reviewer.objects.filter(user=acting_user, tenant=tenant).first()
    if reviewer is None or not acting_user.is_active or is_service_account(acting_user):
        raise GrantForbiddenError(
            f"{acting_user.get_username()} is not a reviewer of {tenant.slug}: only a reviewer gives grants"
        )
    grant, errors = _grant_from(tenant, acting_user, fields)
    if errors:
        raise ApprovalInputError([f"/{field}: {message}" for field, message in errors.items()])
    grant.approval = approval
    return do_create_grant(grant, acting_user=acting_user, surface=surface)


@transaction.atomic
def do_create_grant(grant: Grant, *, acting_user, surface: str) -> Grant:
    return do_save_setting(grant, kind=GRANT, tenant=grant.tenant, acting_user=acting_user, surface=surface)


def check_revoke_grant(*, grant_id, tenant, acting_user, surface: str) -> Grant:
    """Revoke a grant: its granter's, or any of the tenant's for a tenant admin. It covers no
    call from the next one on; revoking a revoked grant changes nothing."""
    grant = grants_visible_to(acting_user, tenant).filter(pk=grant_id).first()
    if grant is None:
        raise GrantNotFoundError(f"there is no grant {grant_id}")
    check_may_manage(
        acting_user, owner=grant.granter, tenant=tenant, what=f"grant {grant.pk}", surface=surface
    )
    if grant.revoked_at is not None:
        return grant
    return do_revoke_grant(grant, acting_user=acting_user, surface=surface)


@transaction.atomic
def do_revoke_grant(grant: Grant, *, acting_user, surface: str) -> Grant:
    grant.revoked_at = timezone.now()
    grant.revoked_by = acting_user
    return do_save_setting(grant, kind=GRANT, tenant=grant.tenant, acting_user=acting_user, surface=surface)


def grants_visible_to(user, tenant):
    """The tenant's grants ``user`` may see: all of them for whoever may change the tenant's
    configuration (a tenant admin), else their own."""
    grants = Grant.objects.filter(tenant=tenant).select_related("granter", "principal", "tenant")
    return grants if configure_refusal(user, tenant) is None else grants.filter(granter=user)


def _grant_from(tenant, granter, fields: Mapping[str, Any]) -> tuple[Grant, dict[str, str]]:
    errors: dict[str, str] = {}
    unknown = sorted(set(fields) - set(FIELDS))
    for name in unknown:
        errors[name] = "not a field of a grant"
    grant = Grant(tenant=tenant, granter=granter)
    grant.tool_pattern = _text(fields, "toolPattern", errors, required=True)
    grant.agent_pattern = _text(fields, "agentPattern", errors) or "*"
    grant.condition = _text(fields, "condition", errors, limit=500)
    if grant.condition:
        try:
            parse_condition(grant.condition)
        except ConditionError as error:
            errors["condition"] = str(error)
    grant.scope = fields.get("scope")
    if grant.scope == Grant.Scope.PRINCIPAL:
        username = fields.get("principal")
        principal = (
            get_user_model().objects.filter(username=username, membership__tenant=tenant).first()
            if isinstance(username, str)
            else None
        )
        if principal is None:
            errors["principal"] = f"the username of a member of {tenant.slug}, whose runs it covers"
        grant.principal = principal
        if "agentId" in fields:
            errors["agentId"] = "a grant over a principal's runs names no agent (agentPattern narrows it)"
    elif grant.scope == Grant.Scope.AGENT:
        grant.agent_id = _text(fields, "agentId", errors, required=True)
        if "principal" in fields:
            errors["principal"] = "a grant over an agent's calls names no principal"
    else:
        errors["scope"] = f"one of {', '.join(Grant.Scope.values)}"
    grant.max_calls = _whole(fields, "maxCalls", errors)
    grant.sum_of = _text(fields, "sumOf", errors)
    max_sum = fields.get("maxSum")
    if max_sum is not None and (
        isinstance(max_sum, bool) or not isinstance(max_sum, int | float) or max_sum <= 0
    ):
        errors["maxSum"] = "a number above 0"
    grant.max_sum = max_sum
    if grant.sum_of and not grant.sum_of.startswith("/"):
        errors["sumOf"] = "a JSON pointer to a number in the arguments, such as /amountCents"
    if bool(grant.sum_of) != (max_sum is not None):
        errors.setdefault("sumOf", "sumOf and maxSum come together: the argument to add up, and its most")
    if grant.max_calls is None and max_sum is None and "maxCalls" not in errors:
        errors["maxCalls"] = "a grant says how much: maxCalls, or sumOf with maxSum, or both"
    grant.expires_at = _expiry(fields, errors)
    return grant, errors


def _text(fields, name: str, errors: dict, *, required: bool = False, limit: int = 200) -> str:
    value = fields.get(name, "")
    if value is None:
        value = ""
    if not isinstance(value, str) or len(value) > limit or (required and not value.strip()):
        errors[name] = f"{'a non-empty' if required else 'a'} string of at most {limit} characters"
        return ""
    return value.strip()


def _whole(fields, name: str, errors: dict) -> int | None:
    value = fields.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1_000_000_000:
        errors[name] = "a whole number from 1 to 1,000,000,000"
        return None
    return value


def _expiry(fields, errors: dict) -> datetime | None:
    """When the grant ends: ``forSeconds`` from now, or at ``expiresAt``; at most
    KINDGI_GRANT_MAX_SECONDS away, and in the future."""
    longest = setting("KINDGI_GRANT_MAX_SECONDS")
    now = timezone.now()
    if ("forSeconds" in fields) == ("expiresAt" in fields):
        errors["expiresAt"] = "say when it ends: expiresAt, or forSeconds (not both)"
        return None
    if "forSeconds" in fields:
        seconds = fields["forSeconds"]
        if isinstance(seconds, bool) or not isinstance(seconds, int) or not 1 <= seconds <= longest:
            errors["forSeconds"] = (
                f"a whole number of seconds from 1 to {longest:,} (KINDGI_GRANT_MAX_SECONDS)"
            )
            return None
        return now + timedelta(seconds=seconds)
    value = fields["expiresAt"]
    ends = parse_datetime(value) if isinstance(value, str) else value if isinstance(value, datetime) else None
    if ends is None or timezone.is_naive(ends):
        errors["expiresAt"] = "a date and time with its offset, such as 2026-12-05T18:00:00Z"
        return None
    if not now < ends <= now + timedelta(seconds=longest):
        errors["expiresAt"] = (
            f"in the future, and at most {longest:,} seconds away (KINDGI_GRANT_MAX_SECONDS)"
        )
        return None
    return ends
