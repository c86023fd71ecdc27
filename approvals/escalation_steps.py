"""What an approval rule's escalation steps may say, and how a new approval takes them on.

A step is ``{"afterSeconds": N, <one action>}``, N seconds after the approval was made, steps in
order of N. The actions: ``raiseRole`` (a role: the approval then needs it or higher),
``notify`` (usernames: mailed now, whatever they chose), ``addReviewers`` (usernames: added to
the reviewers it names, if it names any, and mailed), ``expire`` (true; the last step: the
approval expires, failing closed).
"""

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model

from approvals.roles import is_role, reviewer_roles
from core.bounds import SECONDS_MAX, whole_number_error

ACTIONS = ("raiseRole", "notify", "addReviewers", "expire")
MAX_STEPS = 10


def escalation_error(steps: Any, *, tenant) -> str | None:
    """Why ``steps`` is not a valid escalation for a rule of ``tenant``, or None."""
    if not isinstance(steps, list):
        return "a list of steps"
    if len(steps) > MAX_STEPS:
        return f"at most {MAX_STEPS} steps"
    previous = 0
    for number, step in enumerate(steps, start=1):
        where = f"step {number}"
        if not isinstance(step, dict):
            return f'{where}: an object such as {{"afterSeconds": 60, "raiseRole": "senior"}}'
        unknown = sorted(set(step) - {"afterSeconds", *ACTIONS})
        if unknown:
            return (
                f"{where}: unknown field(s) {', '.join(unknown)} "
                f"(a step has afterSeconds and one of {', '.join(ACTIONS)})"
            )
        after = step.get("afterSeconds")
        if problem := whole_number_error(after, low=1, high=SECONDS_MAX):
            return f"{where}: afterSeconds {problem} (seconds)"
        if after <= previous:
            return f"{where}: afterSeconds must be later than the step before it ({previous})"
        previous = after
        actions = [name for name in ACTIONS if name in step]
        if len(actions) != 1:
            return f"{where}: exactly one of {', '.join(ACTIONS)}"
        action, value = actions[0], step[actions[0]]
        if action == "raiseRole" and not is_role(value):
            return f"{where}: raiseRole {value!r} is not one of: {', '.join(reviewer_roles())}"
        if action == "expire":
            if value is not True:
                return f"{where}: expire must be true"
            if number != len(steps):
                return f"{where}: expire ends the approval, so it must be the last step"
        if action in ("notify", "addReviewers"):
            if not isinstance(value, list) or not value or not all(isinstance(name, str) for name in value):
                return f"{where}: {action} must be a list of usernames"
            known = set(
                get_user_model()
                .objects.filter(username__in=value, membership__tenant=tenant)
                .values_list("username", flat=True)
            )
            if strangers := [name for name in value if name not in known]:
                return f"{where}: not members of {tenant}: {', '.join(map(repr, strangers))}"
    return None


def approval_escalation(
    tenant_id, rule_id: int | None, *, config_version: int | None = None
) -> list[dict[str, Any]]:
    """The escalation of the rule that asked for an approval, with usernames resolved to user ids
    (``userIds``) as they are now. With the tenant's ``config_version``, the rule's steps are read
    once per process and version (the names are resolved each time)."""
    from approvals.models import ApprovalRule
    from tenants.config import cached

    if rule_id is None:
        return []
    steps = cached(
        ("escalation", tenant_id, rule_id),
        config_version,
        lambda: (
            ApprovalRule.objects.filter(pk=rule_id, tenant_id=tenant_id)
            .values_list("escalation", flat=True)
            .first()
        ),
    )
    if not steps:
        return []
    names = {name for step in steps for name in step.get("notify", []) + step.get("addReviewers", [])}
    ids = dict(
        get_user_model()
        .objects.filter(username__in=names, membership__tenant_id=tenant_id)
        .values_list("username", "pk")
    )
    resolved = []
    for step in steps:
        step = dict(step)
        for action in ("notify", "addReviewers"):
            if action in step:
                step["userIds"] = [ids[name] for name in step[action] if name in ids]
        resolved.append(step)
    return resolved


def due_at(created_at, steps: list[dict[str, Any]], done: int):
    """When step ``done`` + 1 is due, or None when none is left."""
    if done >= len(steps):
        return None
    return created_at + timedelta(seconds=steps[done]["afterSeconds"])
