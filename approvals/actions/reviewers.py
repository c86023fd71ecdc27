"""Registering reviewers, their roles and how they are told: the one door for each, for the
API, the console, the CLI and the admin."""

from typing import Any

from django.db import transaction

from approvals.exceptions import (
    ApprovalInputError,
    DecisionForbiddenError,
    NotAReviewerError,
)
from approvals.models import (
    Reviewer,
)
from approvals.roles import is_role, may_decide, reviewer_roles
from audit.actions import SettingKind, do_delete_setting, record_change
from core.secrets import scrub_secrets
from tenants.authority import check_may_configure, configure_refusal
from tenants.selectors import is_service_account, tenant_for_user

DISPLAY_NAME_MAX = 200
# What a refused configuration change names.
REVIEWERS = "{tenant}'s reviewers and their roles"


@transaction.atomic
def check_register_reviewer(
    *, acting_user, role: Any = None, display_name: Any = None, surface: str
) -> Reviewer:
    """Register the acting user as a reviewer of their tenant, or update their registration.

    Who decides the tenant's approvals is the tenant's configuration: only whoever may change it
    (``tenants.authority``, a tenant admin) registers, at any role. A new reviewer names both a
    role and a display name. A reviewer registering again changes only what they name (``None``:
    kept as it is); their role stays unless they may configure the tenant. The returned
    reviewer's ``registration_note`` says what changed, or that nothing did, and why a role
    asked for was not the one kept.

    The registration is read locked and written in one transaction, so a tenant admin's
    demotion or removal made meanwhile waits for it and lands last: never undone by a write
    of what was read before it.
    """
    tenant = tenant_for_user(acting_user)
    if is_service_account(acting_user):
        raise DecisionForbiddenError(
            f"{acting_user.get_username()} is a service account; only a person may be a reviewer"
        )
    existing = Reviewer.objects.select_for_update().filter(user=acting_user, tenant=tenant).first()
    if existing is not None:
        role = existing.role if role is None else role
        display_name = existing.display_name if display_name is None else display_name
    _check_registration(role, display_name)
    may_configure = configure_refusal(acting_user, tenant, surface=surface) is None
    if existing is None and not may_configure:
        # Whoever is a reviewer decides the tenant's approvals: one of its settings (DESIGN §6).
        raise DecisionForbiddenError(
            f"only a tenant admin registers a reviewer: {acting_user.get_username()} is not one yet, so "
            "ask a tenant admin of yours to register you"
        )
    kept_role = ""
    if may_configure:
        kept = role
    elif existing is not None and may_decide(existing.role, role):
        # Asking for their role or a lower one keeps the one they have.
        kept = existing.role
        if role != kept:
            kept_role = f"kept your role {kept!r}: a reviewer's role is a tenant admin's to change"
    else:
        raise DecisionForbiddenError(
            f"only a tenant admin may give a reviewer the role {role!r}; yours is {existing.role!r}: "
            "ask a tenant admin to raise it"
        )
    reviewer = do_save_reviewer(
        user=acting_user,
        tenant=tenant,
        role=kept,
        display_name=display_name.strip(),
        acting_user=acting_user,
        surface=surface,
    )
    reviewer.registration_note = _what_changed(existing, reviewer, kept_role)
    return reviewer


def _what_changed(before: Reviewer | None, after: Reviewer, kept_role: str) -> str:
    """A re-registration's note: each change, or that nothing changed ("" for a new reviewer)."""
    if before is None:
        return ""
    said = []
    if before.display_name != after.display_name:
        said.append(f"changed your display name from {before.display_name!r} to {after.display_name!r}")
    if before.role != after.role:
        said.append(f"changed your role from {before.role!r} to {after.role!r}")
    if kept_role:
        said.append(kept_role)
    if not said:
        said.append(
            f"already registered as {after.display_name!r} with the role {after.role!r}: nothing changed"
        )
    return "; ".join(said)


def check_save_reviewer(*, tenant, user, role: Any, display_name: Any, acting_user, surface: str) -> Reviewer:
    """Register ``user``, a person of ``tenant``, as its reviewer with ``role``, or change their
    registration: a tenant admin's to do (``tenants.authority``), as in the admin."""
    check_may_configure(
        acting_user, tenant, what=f"{tenant.slug}'s reviewers and their roles", surface=surface
    )
    membership = getattr(user, "membership", None)
    if membership is None or membership.tenant_id != tenant.pk:
        raise ApprovalInputError([f"/user: {user.get_username()} is not a member of {tenant.slug}"])
    if membership.is_service_account:
        raise ApprovalInputError(
            [f"/user: {user.get_username()} is a service account; a reviewer is a person"]
        )
    _check_registration(role, display_name)
    return do_save_reviewer(
        user=user,
        tenant=tenant,
        role=role,
        display_name=display_name.strip(),
        acting_user=acting_user,
        surface=surface,
    )


def _check_registration(role: Any, display_name: Any) -> None:
    errors = []
    if role is None:
        errors.append("/role: a new reviewer names a role")
    elif not is_role(role):
        errors.append(f"/role: {role!r} is not a reviewer role (valid roles: {', '.join(reviewer_roles())})")
    if display_name is None or not isinstance(display_name, str) or not display_name.strip():
        errors.append("/displayName: a display name is required")
    elif len(display_name.strip()) > DISPLAY_NAME_MAX:
        errors.append(f"/displayName: at most {DISPLAY_NAME_MAX} characters")
    if errors:
        raise ApprovalInputError(errors)


def reviewer_snapshot(reviewer: Reviewer) -> dict[str, Any]:
    return {"user": reviewer.user.get_username(), "role": reviewer.role, "displayName": reviewer.display_name}


REVIEWER = SettingKind(
    noun="reviewer", snapshot=reviewer_snapshot, label=lambda reviewer: reviewer.user.get_username()
)


@transaction.atomic
def do_save_reviewer(*, user, tenant, role: str, display_name: str, acting_user, surface: str) -> Reviewer:
    """Write a reviewer's registration, and its record in the tenant's audit chain when it
    changed. Joins the admin's transaction, if there is one."""
    existing = Reviewer.objects.filter(user=user).select_related("user").first()
    before = reviewer_snapshot(existing) if existing is not None else None
    reviewer, _ = Reviewer.objects.update_or_create(
        user=user, defaults={"tenant": tenant, "role": role, "display_name": scrub_secrets(display_name)}
    )
    after = reviewer_snapshot(reviewer)
    if after != before:
        if before is None:
            action = "reviewer.registered"
        elif before["role"] != after["role"]:
            action = "reviewer.role-changed"
        else:
            action = "reviewer.changed"
        record_change(
            tenant=tenant,
            acting_user=acting_user,
            surface=surface,
            action=action,
            target_type="reviewer",
            target_id=user.pk,
            target_label=user.get_username(),
            before=before,
            after=after,
        )
    return reviewer


def check_remove_reviewer(reviewer: Reviewer, *, acting_user, surface: str) -> None:
    """Take ``reviewer``'s registration away: they decide nothing from now on."""
    tenant = reviewer.tenant
    check_may_configure(acting_user, tenant, what=REVIEWERS.format(tenant=tenant.slug), surface=surface)
    do_delete_setting(reviewer, kind=REVIEWER, tenant=tenant, acting_user=acting_user, surface=surface)


def check_set_notifications(*, acting_user, notify: Any = None, digest_minutes: Any = None) -> Reviewer:
    """Choose how the acting reviewer hears of approvals: a mail each at once, a digest every
    ``digest_minutes``, or none; what is not given stays as it was."""
    reviewer = Reviewer.objects.filter(user=acting_user).select_related("user", "tenant").first()
    if reviewer is None:
        raise NotAReviewerError(f"{acting_user.get_username()} is not a reviewer; register as one")
    errors = []
    if notify is not None and notify not in Reviewer.Notify.values:
        errors.append(f"/notify: {notify!r} is not one of: {', '.join(Reviewer.Notify.values)}")
    if digest_minutes is not None and (
        isinstance(digest_minutes, bool)
        or not isinstance(digest_minutes, int)
        or not 1 <= digest_minutes <= 1440
    ):
        errors.append("/digestMinutes: a whole number of minutes from 1 to 1440")
    if errors:
        raise ApprovalInputError(errors)
    return do_set_notifications(reviewer, notify=notify, digest_minutes=digest_minutes)


@transaction.atomic(durable=True)
def do_set_notifications(reviewer: Reviewer, *, notify: str | None, digest_minutes: int | None) -> Reviewer:
    if notify is not None:
        reviewer.notify = notify
    if digest_minutes is not None:
        reviewer.digest_minutes = digest_minutes
    reviewer.next_digest_at = None  # the new choice counts from now
    reviewer.save(update_fields=["notify", "digest_minutes", "next_digest_at", "updated_at"])
    return reviewer
