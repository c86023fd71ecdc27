"""Deciding an approval: a reviewer's approval, rejection or request for changes (edits judged
by the same call policy first), or a connection owner's; the door the API, the console, the CLI,
mail links and the admin all call."""

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from uuid import UUID

from django.db import connection, transaction
from django.utils import timezone

from approvals.actions.grants import check_create_grant
from approvals.chain import do_append_decision
from approvals.events import APPROVED_IN_PART, DECIDED, EXPIRED, announce
from approvals.exceptions import (
    ApprovalConflictError,
    ApprovalInputError,
    ApprovalNotFoundError,
    DecisionForbiddenError,
)
from approvals.models import (
    Approval,
    ApprovalStatus,
    Decision,
    DecisionKind,
    Reviewer,
)
from approvals.permissions import can_decide
from approvals.roles import lowest_role, may_decide
from approvals.step_up import StepUp, confirm, needs_step_up
from approvals.tracing import trace_decided
from audit.models import Surface
from core import tracing
from core.conf import setting
from core.errors import DomainError
from core.prepared import Param, Prepared
from core.rows import update_row
from core.secrets import scrub_secrets
from runs.actions import resume_locked_run
from runs.engine.policy import PolicyContext, Refused, Stop, Suspend
from runs.engine.waitpoints import (
    APPROVAL,
    CONNECTION_USE,
    INTERRUPTED_TOOL_CALL,
    PENDING_TOOL_CALL,
    call_digest,
)
from runs.models import Run
from runs.policy_context import judge_edited_call
from tenants.selectors import tenant_for_user

logger = logging.getLogger("kindgi.approvals")

# The role a decision on a connection:use approval records: its owner's, not a reviewer's.
CONNECTION_OWNER = "connection owner"


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
    allow: Any = None,
    surface: str = Surface.API,
    step_up: StepUp | None = None,
) -> Completion:
    """Approve, reject or request changes. A rejection needs a rationale, and a request for
    changes a note (its ``rationale``) that the model reads; an approval may edit the
    arguments, which go through the call policy as if the model had asked for them. An approval
    may ``allow`` calls like this one from now on: a standing grant, in the decider's name, for
    the same tool, agent and principal (``{"forSeconds", "maxCalls", "condition"?, ...}``)."""
    tenant = tenant_for_user(acting_user)
    approval_id = _approval_id(approval_id)
    errors = []
    if decision not in DecisionKind.values:
        errors.append(f"/decision: {decision!r} is not one of: {', '.join(DecisionKind.values)}")
    if rationale is None:
        rationale = ""
    if not isinstance(rationale, str):
        errors.append("/rationale: must be text")
    elif decision == DecisionKind.REJECT and not rationale.strip():
        errors.append("/rationale: a rejection needs a rationale")
    elif decision == DecisionKind.REQUEST_CHANGES and not rationale.strip():
        errors.append("/rationale: a request for changes needs a note saying what to change")
    if arguments is not None and decision != DecisionKind.APPROVE:
        errors.append("/arguments: only an approval can change the arguments")
    if allow is not None and decision != DecisionKind.APPROVE:
        errors.append("/allow: only an approval can allow calls like it")
    elif allow is not None and not isinstance(allow, Mapping):
        errors.append('/allow: an object such as {"forSeconds": 7200, "maxCalls": 3}')
    elif allow is not None and (unknown := sorted(set(allow) - set(ALLOW_FIELDS))):
        errors.extend(f"/allow/{name}: not known (one of {', '.join(ALLOW_FIELDS)})" for name in unknown)
    if errors:
        raise ApprovalInputError(errors)
    return do_complete_approval(
        approval_id=approval_id,
        tenant=tenant,
        acting_user=acting_user,
        decision=decision,
        rationale=scrub_secrets(rationale.strip()),
        arguments=scrub_secrets(arguments),
        allow=allow,
        surface=surface,
        step_up=step_up,
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
    *,
    approval_id: UUID,
    tenant,
    acting_user,
    decision: str,
    rationale: str,
    arguments: Any,
    allow: Mapping[str, Any] | None = None,
    surface: str = Surface.API,
    step_up: StepUp | None = None,
) -> Completion:
    """Decide once, under row locks taken run first, then approval (the order every path uses).
    A refused decision (not the decider's to take, or an edit the policy would not let run)
    changes nothing: the approval stays pending."""
    run, approval = _locked_for_decision(approval_id, tenant)
    reviewer = _REVIEWER.one_or_none(user=acting_user.pk, tenant=tenant.pk)
    if (refusal := can_decide(reviewer, approval, user=acting_user)) is not None:
        raise refusal.error()
    if needs_step_up(approval):
        if arguments is not None or allow is not None:
            # The passkey confirms a decision on the call as it was asked for, nothing more.
            what = "/arguments" if arguments is not None else "/allow"
            raise ApprovalInputError(
                [
                    f"{what}: this call's rule asks for the reviewer's passkey, which confirms the call "
                    "as asked: approve it as it is, or reject it"
                ]
            )
        confirm(acting_user, approval, decision, step_up)
    if decision == DecisionKind.REQUEST_CHANGES:
        _may_request_changes(run, approval)
    edited, digest, context = None, approval.digest, None
    if arguments is not None:
        edited, context = _allowed_edit(run, approval, reviewer, arguments)
        digest = call_digest(approval.tool_key, approval.tool_version, edited)
    if allow is not None:  # refused before anything is written, or written with the decision
        _allow_calls_like(approval, run, acting_user, allow, surface=surface)
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
    approval.status = SETTLED_AS[decision]
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
        context=context,
    )
    record = append_decision()
    approval.decided_at = now
    approval.decision = record
    update_row(approval, ["status", "decided_at", "decision", "approvals_given"])
    # Announced before the run is set going: the event's on-commit send then goes out first,
    # not after the resumed run has executed (immediate tasks run it on commit too).
    announce_decided(approval, record)
    set_going()
    return Completion(approval=approval, decision=record)


SETTLED_AS = {
    DecisionKind.APPROVE: ApprovalStatus.APPROVED,
    DecisionKind.REJECT: ApprovalStatus.REJECTED,
    DecisionKind.REQUEST_CHANGES: ApprovalStatus.CHANGES_REQUESTED,
}


def _may_request_changes(run: Run, approval: Approval) -> None:
    """A request for changes sends the call back to the model that proposed it, with the note:
    so only a model's call can take one, and only so many times a turn (``KINDGI_MAX_CHANGE_
    REQUESTS``), after which the reviewer approves or rejects."""
    if approval.subject_kind != PENDING_TOOL_CALL:
        raise ApprovalConflictError(
            "changes can be requested only of a call a model proposed: approve or reject this one"
        )
    if not run.is_agent_turn:
        raise ApprovalConflictError(
            "this call is a flow's step, and a flow has no model to change it: approve or reject it"
        )
    most = setting("KINDGI_MAX_CHANGE_REQUESTS")
    asked = Approval.objects.filter(run=run, status=ApprovalStatus.CHANGES_REQUESTED).count()
    if asked >= most:
        raise ApprovalConflictError(
            f"changes were requested {asked} times in this turn already, the most allowed "
            f"(KINDGI_MAX_CHANGE_REQUESTS={most}): approve or reject this call"
        )


# What a decider may say of the grant an approval gives; its tool, agent and principal are the call's.
ALLOW_FIELDS = ("forSeconds", "expiresAt", "maxCalls", "sumOf", "maxSum", "condition")


def _allow_calls_like(
    approval: Approval, run: Run, decider, allow: Mapping[str, Any], *, surface: str
) -> None:
    """The standing grant an approval gives with it: the approved call's tool, agent and
    principal, as long and as often as the decider says. Refused (and the decision with it) for
    what no grant may cover: a call that needs several people, an interrupted call, a
    connection's use."""
    if approval.subject_kind != PENDING_TOOL_CALL:
        raise ApprovalInputError(["/allow: only a call's approval can allow calls like it"])
    if approval.required_approvals > 1:
        raise ApprovalInputError(
            [
                f"/allow: this call needs {approval.required_approvals} approvals from distinct reviewers, "
                "and no grant may stand in for several people"
            ]
        )
    if run.principal_id is None:
        raise ApprovalInputError(["/allow: this run has no principal whose calls a grant could cover"])
    if not run.is_agent_turn:
        raise ApprovalInputError(
            ["/allow: a flow's step is approved run by run; give a grant through the API or the CLI"]
        )
    fields = dict(allow) | {
        "toolPattern": approval.tool_key,
        "agentPattern": run.agent_key,
        "scope": "principal",
        "principal": run.principal.get_username(),
    }
    try:
        check_create_grant(
            tenant=run.tenant, acting_user=decider, fields=fields, surface=surface, approval=approval
        )
    except ApprovalInputError as error:
        raise ApprovalInputError([line.replace("/", "/allow/", 1) for line in error.errors]) from None


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


def _allowed_edit(
    run: Run, approval: Approval, reviewer: Reviewer, arguments: Any
) -> tuple[dict[str, Any], PolicyContext]:
    """The edited arguments as they will run, once the call policy has judged them as if the
    model had asked for them and ``reviewer`` may approve what it asks, with the run's policy
    context the judgement built; otherwise the reason the decision is refused."""
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
    verdict, context = judge_edited_call(
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
        if gate.step_up:
            raise DecisionForbiddenError(
                f"the edited call's rule asks for the reviewer's passkey ({gate.reason}), which confirms "
                "a call as it was asked for: approve the call as asked or reject it, so the approval is "
                "still pending"
            )
    return verdict.call.arguments, context


def announce_decided(approval: Approval, decision: Decision) -> None:
    announce(approval, EXPIRED if approval.status == ApprovalStatus.EXPIRED else DECIDED, decision)
    if tracing.enabled():
        # Robust: a span that cannot be made holds up nothing registered after it (the run's
        # going on).
        transaction.on_commit(lambda: trace_decided(approval, decision), robust=True)
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
