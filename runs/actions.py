"""The caller-facing doors of the runs app: start, resume, cancel and recover runs.

``check_*`` validates untrusted input, then calls ``do_*``; each ``do_*`` is one durable
transaction under the run's row lock. What executors write (claims, steps, endings) is in
``runs.journal``.
"""

import logging
from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.db import transaction
from django.utils import timezone

from core.conf import setting
from core.secrets import provider_secrets, scrub_secrets
from core.sweeps import Sweep
from kindgi import AgentDefinition, FlowDefinition
from runs import dispatch, waitpoints
from runs.budgets import release_uncalled
from runs.connection_sources import app_names
from runs.engine.entries import Entry, EntryKind
from runs.engine.inputs import validate_run_input
from runs.engine.policy import PolicyContext
from runs.engine.validation import json_pointer
from runs.exceptions import (
    CancelForbiddenError,
    ConversationNotFoundError,
    RunInputError,
    RunNotFoundError,
    RunStateError,
    UnknownDefinitionError,
)
from runs.journal import append_entries, identity_of
from runs.models import FINISHED_STATUSES, Run, RunStatus, Trigger
from runs.permissions import cancel_refusal
from runs.policy_context import missing_here
from runs.principals import principal_for_start
from tenants.models import Membership, Tenant
from tenants.selectors import is_service_account, tenant_for_user
from tools.registry import get_registry

logger = logging.getLogger("kindgi.runs")


def _resolve_target(
    *, flow_id: str | None, agent_id: str | None, version: str | None
) -> FlowDefinition | AgentDefinition:
    if (flow_id is None) == (agent_id is None):
        raise RunInputError(["/: give exactly one of a flow or an agent to run"])
    registry = get_registry()
    found = registry.agent(agent_id, version) if agent_id is not None else registry.flow(flow_id, version)
    if found is None:
        kind, name = ("agent", agent_id) if agent_id is not None else ("flow", flow_id)
        raise UnknownDefinitionError(
            f'there is no {kind} "{name}"' + (f" version {version}" if version else "")
        )
    return found


def check_start_run(
    *,
    flow_id: str | None = None,
    agent_id: str | None = None,
    version: str | None = None,
    input: Any,
    dry_run: bool = False,
    read_only: bool = False,
    conversation_id: UUID | None = None,
    tenant: Tenant | None = None,
    acting_user=None,
    connections: Any = None,
    connection_labels: Mapping[str, str] | None = None,
    trigger: Trigger | None = None,
    token=None,
    principal=None,
) -> Run:
    """Start a run of a flow or an agent turn for ``tenant`` (by default, the acting user's).

    Returns the run as it stands once this call is done: with the immediate task backend,
    completed, failed or suspended.

    An agent turn given ``conversation_id`` continues that conversation: the model sees its
    earlier turns, and tools approved there are approved for this turn too.

    A person's run (``acting_user`` a person) uses their own connections. A run no person starts
    (a service account's, or ``trigger`` mail or schedule) may name whose connection each app's
    calls use, ``connections`` ``{app: username}``; each such use first waits for that person's yes.
    ``connection_labels`` ``{app: text}`` say which of theirs it is (a mailbox's address), for the
    person asked.

    Every run has a principal (``runs.principals``): the person who starts it; for a service
    account, the person its ``token`` names as responsible; for a run no person starts, the
    person it runs for, ``principal`` (a schedule's or mailbox's owner).
    """
    tenant = tenant or tenant_for_user(acting_user)
    service = acting_user if is_service_account(acting_user) else None
    if trigger is None:
        trigger = Trigger.PERSON if acting_user is not None and service is None else Trigger.SERVICE
    if trigger == Trigger.PERSON and acting_user is None:
        raise RunInputError(["/trigger: a person's run needs the person who starts it"])
    principal = principal_for_start(
        trigger=trigger, tenant=tenant, acting_user=acting_user, token=token, on_behalf_of=principal
    )
    owners = _connection_owners(connections, tenant=tenant, trigger=trigger)
    for app, label in (connection_labels or {}).items():
        if app in owners:
            owners[app]["label"] = label
    target = _resolve_target(flow_id=flow_id, agent_id=agent_id, version=version)
    try:
        run_input = validate_run_input(target, input, secrets=provider_secrets())
    except RunInputError as error:  # name the fields as the caller sent them: under "input"
        raise RunInputError(
            ["/input" + (line[1:] if line.startswith("/:") else line) for line in error.errors]
        ) from None
    if conversation_id is not None:
        _check_conversation(conversation_id, target, tenant=tenant, principal=principal)
    run = do_create_run(
        tenant=tenant,
        target=target,
        input=run_input,
        dry_run=dry_run,
        read_only=read_only,
        conversation_id=conversation_id,
        trigger=trigger,
        started_by=acting_user if trigger == Trigger.PERSON else None,
        service=service,
        principal=principal,
        connection_owners=owners,
    )
    # Executed here but not to its end, or by this process's queue: read as it now stands. A
    # run handed to a worker is answered as it was written, queued (it is never read back).
    if run.status == RunStatus.RUNNING or (run.status == RunStatus.QUEUED and dispatch.executes_here()):
        run.refresh_from_db()
    return run


def _connection_owners(connections: Any, *, tenant: Tenant, trigger: str) -> dict[str, dict[str, Any]]:
    """``connections`` ({app: username}) as the run stores them, once each app is one of the
    tenant's and each username one of its people."""
    if connections is None or connections == {}:
        return {}
    if trigger == Trigger.PERSON:
        raise RunInputError(
            [
                "/connections: a run a person starts uses their own connections; only a run no person "
                "starts (a service account's) names whose to use"
            ]
        )
    if not isinstance(connections, Mapping):
        raise RunInputError(['/connections: must be an object, {"<app>": "<username>"}'])
    known_apps = app_names(tenant.pk)
    usernames = [name for name in connections.values() if isinstance(name, str)]
    people = {
        member.user.get_username(): member
        for member in Membership.objects.filter(
            tenant=tenant, user__username__in=usernames, user__is_active=True
        ).select_related("user")
    }
    errors, owners = [], {}
    for app, username in connections.items():
        where = json_pointer(["connections", app])
        if app not in known_apps:
            errors.append(f"{where}: there is no app {app!r} here" + _known(known_apps))
        elif not isinstance(username, str):
            errors.append(f"{where}: must be a username")
        elif username not in people:
            errors.append(f"{where}: there is no person {username!r} in this tenant")
        elif people[username].is_service_account:
            errors.append(f"{where}: {username!r} is a service account; a connection is a person's")
        else:
            owners[app] = {"userId": people[username].user_id, "username": username}
    if errors:
        raise RunInputError(errors)
    return owners


def _known(names) -> str:
    return f" (apps: {', '.join(sorted(names))})" if names else " (there are no apps to connect)"


def _check_conversation(
    conversation_id: UUID, target: FlowDefinition | AgentDefinition, *, tenant: Tenant, principal
) -> None:
    """A conversation is continued only by its principal: for anyone else it does not exist."""
    if not isinstance(target, AgentDefinition):
        raise RunInputError(["/conversationId: only an agent turn continues a conversation"])
    turns = Run.objects.filter(tenant=tenant, conversation_id=conversation_id)
    latest = turns.order_by("-created_at").only("agent_key", "principal_id").first()
    if latest is None or latest.principal_id != principal.pk:
        raise ConversationNotFoundError(f"there is no conversation {conversation_id}")
    if latest.agent_key != target.id:
        raise RunInputError(
            [f"/conversationId: conversation {conversation_id} is with {latest.agent_key}, not {target.id}"]
        )
    unfinished = turns.exclude(status__in=FINISHED_STATUSES).first()
    if unfinished is not None:
        raise RunStateError(
            f"conversation {conversation_id} has a turn that is still {unfinished.status} "
            f"(run {unfinished.pk}); finish or cancel it first"
        )


@transaction.atomic(durable=True)
def do_create_run(
    *,
    tenant: Tenant,
    target: FlowDefinition | AgentDefinition,
    input: dict[str, Any],
    dry_run: bool,
    read_only: bool,
    conversation_id: UUID | None = None,
    trigger: str = Trigger.PERSON,
    started_by=None,
    service=None,
    principal=None,
    connection_owners: Mapping[str, Any] | None = None,
) -> Run:
    """Create a queued run and execute it once this transaction commits. ``input`` is valid;
    ``principal`` is the person who stands behind it (``runs.principals``)."""
    run = Run(
        **identity_of(target),
        tenant=tenant,
        input=scrub_secrets(input),
        dry_run=dry_run,
        read_only=read_only,
        trigger=trigger,
        started_by=started_by,
        service=service,
        principal=principal,
        connection_owners=dict(connection_owners or {}),
    )
    if run.is_agent_turn:
        run.conversation_id = conversation_id or run.pk
    dispatch.start(run, then=lambda finished: _executed_into(run, finished))
    return run


def _executed_into(run: Run, finished: Run | None) -> None:
    """Bring the caller's ``run`` up to where its execution left it, reading again only what
    the execution's end did not hold."""
    if finished is None:
        run.refresh_from_db()
        return
    held = set(finished.get_deferred_fields())
    unread = held - {"input"}  # the caller's input is the run's
    if finished.status != RunStatus.COMPLETED:
        unread.discard("output")  # only a completed run has one
    for field in Run._meta.concrete_fields:
        if field.attname not in held:
            setattr(run, field.attname, getattr(finished, field.attname))
    if unread:
        run.refresh_from_db(fields=sorted(unread))


@transaction.atomic(durable=True)
def do_resume_run(run_id: UUID, *, waitpoint_key: Mapping[str, Any], resolution: Mapping[str, Any]) -> Run:
    """Resolve what a suspended run waits on and queue it to continue.

    Waitpoints another app owns (an approval) are resolved through that app, never here.
    """
    run = Run.objects.select_for_update().get(pk=run_id)
    kind = (run.waitpoint or {}).get("kind", "")
    if waitpoints.owned_by_an_app(kind):
        raise RunStateError(f"run {run_id} waits on an {kind}; it resumes when the {kind} is decided")
    resume_locked_run(run, waitpoint_key=waitpoint_key, resolution=resolution)
    return run


def resume_locked_run(
    run: Run,
    *,
    waitpoint_key: Mapping[str, Any],
    resolution: Mapping[str, Any],
    set_going: bool = True,
    context: PolicyContext | None = None,
) -> Callable[[], None]:
    """Resume ``run`` inside the caller's transaction, so the resolution and the resume commit together.

    Precondition: ``run`` is locked with select_for_update. ``waitpoint_key`` must match the
    run's waitpoint (e.g. ``{"kind": "approval", "approvalId": …}``), so that a stale or
    repeated resolution cannot resume the run at another wait. ``set_going``: as
    ``runs.dispatch.resume_locked`` takes it, whose function this returns; ``context``: the
    run's policy context if the caller built it (judging an edit), for an execution here.
    """
    if run.status != RunStatus.SUSPENDED:
        raise RunStateError(f"run {run.pk} is {run.status}, not suspended")
    waitpoint = run.waitpoint or {}
    if any(waitpoint.get(key) != value for key, value in waitpoint_key.items()):
        raise RunStateError(f"run {run.pk} does not wait on {dict(waitpoint_key)}")
    return dispatch.resume_locked(run, resolution, set_going=set_going, context=context)


@transaction.atomic(durable=True)
def check_cancel_run(run_id: UUID, *, acting_user, token=None, reason: str = "") -> Run:
    """Cancel a run of the acting user's tenant, if they may (``runs.permissions``): a run of
    another tenant does not exist for them; one they may see but not cancel is refused."""
    tenant = tenant_for_user(acting_user)
    run = Run.objects.select_for_update().filter(pk=run_id, tenant=tenant).first()
    if run is None:
        raise RunNotFoundError(f"there is no run {run_id}")
    if (refusal := cancel_refusal(run, acting_user, token=token)) is not None:
        raise CancelForbiddenError(refusal)
    return _cancel_locked(run, reason=reason, acting_user=acting_user)


@transaction.atomic(durable=True)
def do_cancel_run(run_id: UUID, *, reason: str = "", acting_user=None) -> Run:
    """Cancel a queued, running or suspended run and every unfinished run below it, for a
    caller that has checked the rights (the system's sweeps, or ``check_cancel_run``)."""
    return _cancel_locked(
        Run.objects.select_for_update().get(pk=run_id), reason=reason, acting_user=acting_user
    )


def _cancel_locked(run: Run, *, reason: str, acting_user) -> Run:
    """Precondition: ``run`` is locked with select_for_update in this transaction."""
    run_id = run.pk
    if run.is_finished:
        raise RunStateError(f"run {run_id} is already {run.status}")
    _cancel(run, reason=reason or "cancelled", acting_user=acting_user)
    transaction.on_commit(
        lambda: logger.info(
            "run %s: cancelled (%s)", run_id, reason or "no reason given", extra={"run_id": str(run_id)}
        )
    )
    return run


def _cancel(run: Run, *, reason: str, acting_user) -> None:
    by = acting_user.get_username() if acting_user else None
    append_entries(run, [Entry(kind=EntryKind.RUN_CANCELLED, payload={"reason": reason, "by": by})])
    run.status, run.finished_at, run.waitpoint = RunStatus.CANCELLED, timezone.now(), None
    run.claim_token, run.claim_expires_at = "", None
    run.save()
    waitpoints.on_cancel(run)
    release_uncalled(run.pk)
    for child in Run.objects.select_for_update().filter(parent=run).exclude(status__in=FINISHED_STATUSES):
        _cancel(child, reason="its parent run was cancelled", acting_user=acting_user)


def recover_stuck_runs(*, now=None, limit: int | None = None) -> Sweep:
    """Queue again every running run whose executor's claim has expired (the executor died).

    The executor that picks one up takes the claim over and continues from the journal. A run
    whose agent or flow this process has not loaded is left as it is and reported: executed
    here, it would fail for want of a definition another process has."""
    now = now or timezone.now()
    sweep = Sweep()
    stuck = Run.objects.filter(status=RunStatus.RUNNING, claim_expires_at__lt=now).order_by(
        "claim_expires_at"
    )
    for run in stuck.defer("messages")[:limit]:
        if (why := missing_here(run)) is not None:
            sweep.left.append(why)
            continue
        logger.warning(
            "run %s: its executor's claim expired; queued again", run.pk, extra={"run_id": str(run.pk)}
        )
        dispatch.requeue(run.pk)
        sweep.done.append(run.pk)
    if not dispatch.executes_here() and not dispatch.queue_is_in_the_database():
        cutoff = now - timedelta(seconds=setting("KINDGI_RUN_LEASE_SECONDS"))
        _queue_again_what_redis_may_have_lost(sweep, now=now, cutoff=cutoff, limit=limit)
    return sweep


def _queue_again_what_redis_may_have_lost(sweep: Sweep, *, now, cutoff, limit: int | None) -> None:
    """A queue outside the database (RQ, Celery) is given a run's task once the change that
    queued it has committed, and a process that dies, or a Redis that does not answer, between
    the two loses the task: the run would stay queued for ever. Every run queued for longer than
    a claim's lease is given a task again, at most once a lease: delivered twice, a task finds
    the run claimed and does nothing."""
    waiting = Run.objects.filter(status=RunStatus.QUEUED, updated_at__lt=cutoff).order_by("updated_at")
    for run in waiting.defer("messages")[:limit]:
        if (why := missing_here(run)) is not None:
            sweep.left.append(why)
            continue
        # Touched first, so that this round's task is the only one until the lease has passed.
        if Run.objects.filter(pk=run.pk, status=RunStatus.QUEUED, updated_at__lt=cutoff).update(
            updated_at=now
        ):
            logger.warning(
                "run %s: queued %s ago without a worker taking it; its task is given again",
                run.pk,
                now - run.updated_at,
                extra={"run_id": str(run.pk)},
            )
            dispatch.requeue(run.pk)
            sweep.done.append(run.pk)
