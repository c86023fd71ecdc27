"""Registering reviewers, deciding approvals and writing rules: the one entry point for each that
the API, the console, the CLI and the admin call."""

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from uuid import UUID

from django.db import connection, transaction
from django.utils import timezone

from approvals.chain import do_append_decision
from approvals.events import APPROVED_IN_PART, DECIDED, EXPIRED, announce
from approvals.exceptions import (
    ApprovalConflictError,
    ApprovalInputError,
    ApprovalNotFoundError,
    DecisionForbiddenError,
    NotAReviewerError,
)
from approvals.models import (
    Approval,
    ApprovalRule,
    ApprovalStatus,
    Decision,
    DecisionKind,
    Reviewer,
    Webhook,
)
from approvals.permissions import can_decide
from approvals.roles import is_role, lowest_role, may_decide, reviewer_roles
from approvals.rules import RULE, RULE_FIELDS, rule_errors
from audit.actions import SettingKind, do_delete_setting, do_save_setting, record_change
from core.errors import DomainError
from core.prepared import Param, Prepared
from core.rows import update_row
from core.secrets import fingerprint, redact_url, scrub_secrets
from core.sweeps import Sweep
from runs.actions import resume_locked_run
from runs.calls import judge_edited_call, missing_here
from runs.engine.policy import Refused, Stop, Suspend
from runs.engine.waitpoints import APPROVAL, CONNECTION_USE, INTERRUPTED_TOOL_CALL, call_digest
from runs.models import Run
from tenants.authority import check_may_configure, configure_refusal
from tenants.selectors import is_service_account, tenant_for_user

logger = logging.getLogger("kindgi.approvals")

DISPLAY_NAME_MAX = 200
# What a refused configuration change names.
RULES = "{tenant}'s approval rules"
REVIEWERS = "{tenant}'s reviewers and their roles"
# The role a decision on a connection:use approval records: its owner's, not a reviewer's.
CONNECTION_OWNER = "connection owner"


def check_register_reviewer(*, acting_user, role: Any, display_name: Any, surface: str) -> Reviewer:
    """Register the acting user as a reviewer of their tenant, or update their registration.

    Who decides the tenant's approvals is the tenant's configuration: only whoever may change it
    (``tenants.authority``, a tenant admin) registers, at any role. A reviewer registering again
    may change their display name; their role stays (a tenant admin changes it), and the returned
    reviewer's ``registration_note`` says when the role asked for was not the one kept.
    """
    tenant = tenant_for_user(acting_user)
    if is_service_account(acting_user):
        raise DecisionForbiddenError(
            f"{acting_user.get_username()} is a service account; only a person may be a reviewer"
        )
    _check_registration(role, display_name)
    existing = Reviewer.objects.filter(user=acting_user, tenant=tenant).first()
    may_configure = configure_refusal(acting_user, tenant, surface=surface) is None
    if existing is None and not may_configure:
        # Whoever is a reviewer decides the tenant's approvals: one of its settings (DESIGN §6).
        raise DecisionForbiddenError(
            f"only a tenant admin registers a reviewer: {acting_user.get_username()} is not one yet, so "
            "ask a tenant admin of yours to register you"
        )
    if may_configure:
        kept, note = role, ""
    elif existing is not None and may_decide(existing.role, role):
        # Asking for their role or a lower one keeps the one they have.
        kept = existing.role
        note = (
            ""
            if role == kept
            else f"kept your role {kept!r}: a reviewer's role is a tenant admin's to change"
        )
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
    reviewer.registration_note = note
    return reviewer


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
    if not is_role(role):
        errors.append(f"/role: {role!r} is not a reviewer role (valid roles: {', '.join(reviewer_roles())})")
    if not isinstance(display_name, str) or not display_name.strip():
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


class CompletionKind(StrEnum):
    # The approval is settled and its run goes on.
    TERMINAL = "terminal"
    # An approval given toward the several the call needs: it still waits for the others.
    PARTIAL = "partial"


@dataclass(frozen=True, kw_only=True)
class Completion:
    """What deciding an approval returns: the decision, and whether it settled the approval
    (``terminal``: the run was resumed) or was one of several approvals it needs (``partial``)."""

    approval: Approval
    decision: Decision
    kind: str = CompletionKind.TERMINAL
    waitpoint_resolved: bool = True


def check_complete_approval(
    *,
    approval_id: UUID,
    acting_user,
    decision: Any,
    rationale: Any = "",
    arguments: Any = None,
) -> Completion:
    """Approve or reject an approval. A rejection needs a rationale; an approval may edit the
    arguments, which go through the call policy as if the model had asked for them."""
    tenant = tenant_for_user(acting_user)
    approval_id = _approval_id(approval_id)
    errors = []
    if decision not in DecisionKind.values:
        errors.append(f"/decision: {decision!r} is not one of: approve, reject")
    if rationale is None:
        rationale = ""
    if not isinstance(rationale, str):
        errors.append("/rationale: must be text")
    elif decision == DecisionKind.REJECT and not rationale.strip():
        errors.append("/rationale: a rejection needs a rationale")
    if arguments is not None and decision != DecisionKind.APPROVE:
        errors.append("/arguments: only an approval can change the arguments")
    if errors:
        raise ApprovalInputError(errors)
    return do_complete_approval(
        approval_id=approval_id,
        tenant=tenant,
        acting_user=acting_user,
        decision=decision,
        rationale=scrub_secrets(rationale.strip()),
        arguments=scrub_secrets(arguments),
    )


def decide_each(
    *, acting_user, decisions: Iterable[Mapping[str, Any]]
) -> list[tuple[Any, Completion | DomainError]]:
    """Decide several approvals, each on its own through ``check_complete_approval`` (its own
    transaction, decision rights and audit record): one refused leaves the others decided.
    Each item is ``{approvalId, decision, rationale?, arguments?}``; the answer pairs each id with
    its completion or the error that refused it."""
    results: list[tuple[Any, Completion | DomainError]] = []
    for item in decisions:
        fields = dict(item)
        approval_id = fields.pop("approvalId")
        try:
            results.append(
                (
                    approval_id,
                    check_complete_approval(approval_id=approval_id, acting_user=acting_user, **fields),
                )
            )
        except DomainError as error:
            results.append((approval_id, error))
    return results


def _approval_id(value: Any) -> UUID:
    """An approval's id from whatever a surface passed; not an id, no such approval."""
    if isinstance(value, UUID):
        return value
    try:
        return UUID(str(value))
    except ValueError:
        raise ApprovalNotFoundError(f"there is no approval {value}") from None


@transaction.atomic(durable=True)
def do_complete_approval(
    *, approval_id: UUID, tenant, acting_user, decision: str, rationale: str, arguments: Any
) -> Completion:
    """Decide once, under row locks taken run first, then approval (the order every path uses).
    A refused decision (not the decider's to take, or an edit the policy would not let run)
    changes nothing: the approval stays pending."""
    run, approval = _locked_for_decision(approval_id, tenant)
    reviewer = _REVIEWER.one_or_none(user=acting_user.pk, tenant=tenant.pk)
    if (refusal := can_decide(reviewer, approval, user=acting_user)) is not None:
        raise refusal.error()
    edited, digest = None, approval.digest
    if arguments is not None:
        edited = _allowed_edit(run, approval, reviewer, arguments)
        digest = call_digest(approval.tool_key, approval.tool_version, edited)
    now = timezone.now()
    # A connection's owner decides on its use as themself, reviewer or not.
    decider_name = (
        reviewer.display_name if reviewer else acting_user.get_full_name() or acting_user.get_username()
    )
    decider_role = CONNECTION_OWNER if approval.subject_kind == CONNECTION_USE else reviewer.role

    def append_decision() -> Decision:
        return do_append_decision(
            approval=approval,
            decision=decision,
            rationale=rationale,
            reviewer=reviewer,
            reviewer_name=decider_name,
            reviewer_role_at_decision=decider_role,
            arguments=edited,
            decided_at=now,
        )

    if decision == DecisionKind.APPROVE:
        approval.approvals_given = [
            *approval.approvals_given,
            {
                "userId": acting_user.pk,
                "reviewer": decider_name,
                "role": decider_role,
                "decidedAt": now.isoformat(),
            },
        ]
        if approval.approvals_missing:
            # One of several approvals the call needs (superseded ones not counted): recorded,
            # and it still waits.
            record = append_decision()
            approval.save(update_fields=["approvals_given"])
            announce(approval, APPROVED_IN_PART, record)
            return Completion(
                approval=approval, decision=record, kind=CompletionKind.PARTIAL, waitpoint_resolved=False
            )
    approval.status = ApprovalStatus.APPROVED if decision == DecisionKind.APPROVE else ApprovalStatus.REJECTED
    # Approvals superseded by a raised role did not let it run: they are not named.
    approvers = [given["reviewer"] for given in approval.approvals_counted]
    resolution = {
        "decision": decision,
        "rationale": rationale,
        "approvalId": str(approval.pk),
        # Everyone whose approval let it run, when it needed several.
        "reviewer": " and ".join(approvers)
        if decision == DecisionKind.APPROVE and approvers
        else decider_name,
        "digest": digest,
    }
    if len(approvers) > 1 and decision == DecisionKind.APPROVE:
        resolution["reviewers"] = approvers
    if edited is not None:
        resolution["arguments"] = edited
    # The resume is written before the decision: from the decision's place in its tenant's
    # chain to the commit, the tenant's other decisions wait (the chain's lock), so as little
    # as can be comes after it.
    set_going = resume_locked_run(
        run,
        waitpoint_key={"kind": APPROVAL, "approvalId": str(approval.pk)},
        resolution=resolution,
        set_going=False,
    )
    record = append_decision()
    approval.decided_at = now
    approval.decision = record
    update_row(approval, ["status", "decided_at", "decision", "approvals_given"])
    # Announced before the run is set going: the event's on-commit send then goes out first,
    # not after the resumed run has executed (immediate tasks run it on commit too).
    _decided(approval, record)
    set_going()
    return Completion(approval=approval, decision=record)


_APPROVAL_KEY = Param("approval", Approval._meta.pk)
_TENANT_KEY = Param("tenant", Approval._meta.get_field("tenant"))
# SQLite: the transaction began by taking the database's one write lock, so what it reads
# cannot change under it, and one statement reads both.
_APPROVAL_WITH_RUN = Prepared(
    lambda: (
        Approval.objects.select_related("run__tenant").filter(pk=_APPROVAL_KEY, tenant=_TENANT_KEY).order_by()
    )
)
# Where rows are locked one by one: the run through its approval, then the approval.
_RUN_LOCKED = Prepared(
    lambda: (
        Run.objects.select_for_update(of=("self",))
        .select_related("tenant")
        .filter(tenant=_TENANT_KEY, approvals=_APPROVAL_KEY)
        .order_by()
    )
)
_APPROVAL_LOCKED = Prepared(lambda: Approval.objects.select_for_update().filter(pk=_APPROVAL_KEY).order_by())
_REVIEWER = Prepared(
    lambda: Reviewer.objects.filter(
        user=Param("user", Reviewer._meta.get_field("user")),
        tenant=Param("tenant", Reviewer._meta.get_field("tenant")),
    ).order_by()
)


def _locked_for_decision(approval_id: UUID, tenant) -> tuple[Run, Approval]:
    """The approval of ``tenant`` and its run, the run locked first, then the approval (the order
    every path takes). The run comes with its tenant (read, not locked): the run goes on in this
    process, gated by the tenant's configuration as it is now."""
    if connection.features.has_select_for_update:
        run = _RUN_LOCKED.one_or_none(tenant=tenant.pk, approval=approval_id)
        approval = _APPROVAL_LOCKED.one_or_none(approval=approval_id) if run is not None else None
    else:
        approval = _APPROVAL_WITH_RUN.one_or_none(approval=approval_id, tenant=tenant.pk)
        run = approval.run if approval is not None else None
    if approval is None:
        raise ApprovalNotFoundError(f"there is no approval {approval_id}")
    approval.run = run
    approval.tenant = run.tenant  # the decider's, which it belongs to: its config version comes with it
    return run, approval


def _allowed_edit(run: Run, approval: Approval, reviewer: Reviewer, arguments: Any) -> dict[str, Any]:
    """The edited arguments as they will run, once the call policy has judged them as if the
    model had asked for them and ``reviewer`` may approve what it asks; otherwise the reason
    the decision is refused."""
    if approval.subject_kind == INTERRUPTED_TOOL_CALL:
        raise ApprovalInputError(["/arguments: an interrupted call runs again as it was, or not at all"])
    if approval.subject_kind == CONNECTION_USE:
        raise ApprovalInputError(
            ["/arguments: this approval allows the use of your connection; it does not change the call"]
        )
    if approval.required_approvals > 1:
        raise ApprovalInputError(
            [
                f"/arguments: this call needs {approval.required_approvals} approvals of the same call, so "
                "it cannot be edited; reject it, saying what should change"
            ]
        )
    verdict = judge_edited_call(
        run,
        call_id=approval.call_id,
        tool_id=approval.tool_key,
        node_id=approval.node_id,
        arguments=arguments,
    )
    if isinstance(verdict, Refused) and verdict.errors:
        # Named as the decider sent them: under "arguments".
        raise ApprovalInputError(
            ["/arguments" + (line[1:] if line.startswith("/:") else line) for line in verdict.errors]
        )
    if isinstance(verdict, Refused | Stop):
        why = verdict.reason if isinstance(verdict, Refused) else verdict.message
        raise ApprovalConflictError(f"the edited call would not run ({why}); the approval is still pending")
    if isinstance(verdict, Suspend) and verdict.gate is not None:
        gate = verdict.gate
        needed = gate.required_role or lowest_role()
        if not may_decide(reviewer.role, needed):
            raise DecisionForbiddenError(
                f"the edited call needs a reviewer with the role {needed!r} or higher ({gate.reason}); "
                f"{reviewer.display_name} is {reviewer.role!r}, so the approval is still pending"
            )
        if gate.reviewer_ids and reviewer.user_id not in gate.reviewer_ids:
            raise DecisionForbiddenError(
                f"only the reviewers its rule names may approve the edited call ({gate.reason}); "
                "the approval is still pending"
            )
        if gate.required_approvals > 1:
            raise DecisionForbiddenError(
                f"the edited call needs {gate.required_approvals} approvals from distinct reviewers "
                f"({gate.reason}); approve the call as asked or reject it, so the approval is still pending"
            )
    return verdict.call.arguments


def _decided(approval: Approval, decision: Decision) -> None:
    announce(approval, EXPIRED if approval.status == ApprovalStatus.EXPIRED else DECIDED, decision)
    transaction.on_commit(
        lambda: logger.info(
            "approval %s of run %s: %s by %s",
            approval.pk,
            approval.run_id,
            approval.status,
            decision.reviewer_name or "its expiry",
            extra={"run_id": str(approval.run_id)},
        )
    )


EXPIRED_RATIONALE = "expired"


def expire_due_approvals(*, now=None, limit: int | None = None) -> Sweep:
    """Expire every pending approval whose time is up. Safe to run anywhere, any time: an
    approval whose run this process could not go on with (its agent or flow is not in the packs
    loaded here) is left as it is and reported. Past its time it lets nothing run either way.
    ``limit``: at most this many, the longest overdue first."""
    now = now or timezone.now()
    sweep = Sweep()
    due = Approval.objects.filter(status=ApprovalStatus.PENDING, expires_at__lte=now).select_related("run")
    for approval in due.defer("run__messages").order_by("expires_at")[:limit]:
        if (why := missing_here(approval.run)) is not None:
            sweep.left.append(f"approval {approval.pk}: {why}")
        elif do_expire_approval(approval.pk, now=now):
            sweep.done.append(approval.pk)
    return sweep


@transaction.atomic(durable=True)
def do_expire_approval(approval_id: UUID, *, now=None) -> bool:
    """Expire one approval if it is still pending and due: it counts as a rejection with the
    rationale "expired", and its run resumes with the call not run."""
    now = now or timezone.now()
    run_id = Approval.objects.filter(pk=approval_id).values_list("run_id", flat=True).first()
    if run_id is None:
        return False
    run = Run.objects.select_for_update().get(pk=run_id)
    approval = Approval.objects.select_for_update().get(pk=approval_id)
    if approval.status != ApprovalStatus.PENDING or approval.expires_at is None or approval.expires_at > now:
        return False
    record = do_append_decision(
        approval=approval, decision=DecisionKind.REJECT, rationale=EXPIRED_RATIONALE, decided_at=now
    )
    approval.status, approval.decided_at, approval.decision = ApprovalStatus.EXPIRED, now, record
    approval.save(update_fields=["status", "decided_at", "decision"])
    _decided(approval, record)  # before the resume, as above
    resume_locked_run(
        run,
        waitpoint_key={"kind": APPROVAL, "approvalId": str(approval.pk)},
        resolution={
            "decision": DecisionKind.REJECT,
            "rationale": EXPIRED_RATIONALE,
            "approvalId": str(approval.pk),
        },
    )
    return True


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


THE_WEBHOOK = "{tenant}'s webhook"


def webhook_snapshot(webhook: Webhook) -> dict[str, Any]:
    """Its URL and whether it is on; of its secret, only a mark that changes when it changes."""
    return {"url": redact_url(webhook.url), "enabled": webhook.enabled, "secret": fingerprint(webhook.secret)}


WEBHOOK = SettingKind(
    noun="webhook", snapshot=webhook_snapshot, label=lambda webhook: redact_url(webhook.url)
)


def check_save_webhook(webhook: Webhook, *, acting_user, surface: str) -> Webhook:
    """Save a tenant's webhook (valid, as its form checked it), by whoever may change the
    tenant's configuration."""
    tenant = webhook.tenant
    check_may_configure(acting_user, tenant, what=THE_WEBHOOK.format(tenant=tenant.slug), surface=surface)
    return do_save_setting(webhook, kind=WEBHOOK, tenant=tenant, acting_user=acting_user, surface=surface)


def check_delete_webhook(webhook: Webhook, *, acting_user, surface: str) -> None:
    tenant = webhook.tenant
    check_may_configure(acting_user, tenant, what=THE_WEBHOOK.format(tenant=tenant.slug), surface=surface)
    do_delete_setting(webhook, kind=WEBHOOK, tenant=tenant, acting_user=acting_user, surface=surface)
