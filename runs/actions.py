"""Every change to runs and journals, each in one transaction under the run's row lock.

``check_*`` validates untrusted input, then calls ``do_*``. The engine records
its steps through ``do_record`` and ``do_finish_run`` with the claim token it
got from ``do_claim_run``; a call whose claim is gone raises ``LostClaimError``
and changes nothing.
"""

import logging
from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone
from pydantic import ValidationError

from kindgi import AgentDefinition, FlowDefinition
from runs import waitpoints
from runs.engine.inputs import agent_input_model
from runs.engine.invocation import json_pointer
from runs.engine.outcomes import Completed, Entry, Failed, Outcome, Suspended
from runs.engine.redaction import redact_prompt
from runs.exceptions import LostClaimError, RunInputError, RunStateError, UnknownDefinitionError
from runs.models import (
    AGENT_TURN_FLOW_ID,
    AGENT_TURN_FLOW_VERSION,
    FINISHED_STATUSES,
    JournalEntry,
    JournalKind,
    Run,
    RunStatus,
)
from runs.secrets import provider_secrets, scrub_secrets, scrub_secrets_in_json
from runs.tasks import enqueue_run_on_commit, execute_run
from tenants.models import Tenant
from tenants.selectors import tenant_for_user
from tools.registry import get_registry

logger = logging.getLogger("kindgi.runs")

INPUT_ERROR_LIMIT = 5
# A flow run waiting on its agent step's child run.
CHILD_RUN_WAITPOINT = "child-run"


def _lease() -> timedelta:
    return timedelta(seconds=getattr(settings, "KINDGI_RUN_LEASE_SECONDS", 300))


def append_entry(run: Run, entry: Entry) -> JournalEntry:
    """Append one journal entry and have it published once the transaction commits.

    Precondition: ``run`` was locked with select_for_update in this transaction, so
    ``last_sequence`` is ours to bump."""
    return _append_all(run, [entry])[0]


def _append_all(run: Run, entries: Iterable[Entry]) -> list[JournalEntry]:
    """Append entries in one statement; publish them together once the transaction commits."""
    written = []
    for entry in entries:
        run.last_sequence += 1
        written.append(
            JournalEntry(
                run=run,
                sequence=run.last_sequence,
                kind=entry.kind,
                node_id=entry.node_id,
                duration_ms=entry.duration_ms,
                payload=scrub_secrets(entry.payload or {}),
            )
        )
    if written:
        JournalEntry.objects.bulk_create(written)
        # Published after commit with the run as it stands then, so the events' status is final.
        transaction.on_commit(lambda: publish_now(run, written))
    return written


def publish_now(run: Run, entries: list[JournalEntry]) -> None:
    from runs.events import entry_event, run_group, send_to_groups

    groups = [run_group(run.pk)] + ([run_group(run.parent_id)] if run.parent_id else [])
    send_to_groups(groups, lambda: [entry_event(run, entry) for entry in entries])


def _input_errors(error: ValidationError) -> list[str]:
    return [f"{json_pointer(e['loc'])}: {e['msg']}" for e in error.errors()[:INPUT_ERROR_LIMIT]]


def _resolve_target(
    *, flow_id: str | None, agent_id: str | None, version: str | None
) -> FlowDefinition | AgentDefinition:
    if (flow_id is None) == (agent_id is None):
        raise RunInputError(["/: give exactly one of a flow or an agent to run"])
    registry = get_registry()
    if agent_id is not None:
        found = registry.agent(agent_id, version)
        if found is None:
            raise UnknownDefinitionError(
                f'there is no agent "{agent_id}"' + (f" version {version}" if version else "")
            )
        return found
    found = registry.flow(flow_id, version)
    if found is None:
        raise UnknownDefinitionError(
            f'there is no flow "{flow_id}"' + (f" version {version}" if version else "")
        )
    return found


def validate_run_input(target: FlowDefinition | AgentDefinition, data: Any) -> dict[str, Any]:
    """The input as the run will store it, or ``RunInputError`` naming each bad field."""
    model = target.input_model if isinstance(target, FlowDefinition) else agent_input_model(target)
    try:
        validated = model.model_validate(data)
    except ValidationError as error:
        raise RunInputError(_input_errors(error)) from None
    value = validated.model_dump(mode="json", by_alias=True, exclude_unset=False)
    if isinstance(target, AgentDefinition):
        value["userMessage"] = redact_prompt(value["userMessage"], secrets=provider_secrets())
    return value


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
) -> Run:
    """Start a run of a flow or an agent turn for ``tenant`` (by default, the acting user's).

    Returns the run as it stands once this call is done: with the immediate task backend,
    completed, failed or suspended.

    An agent turn given ``conversation_id`` continues that conversation: the model sees its
    earlier turns, and tools approved there are approved for this turn too.
    """
    tenant = tenant or tenant_for_user(acting_user)
    target = _resolve_target(flow_id=flow_id, agent_id=agent_id, version=version)
    try:
        run_input = validate_run_input(target, input)
    except RunInputError as error:  # name the fields as the caller sent them: under "input"
        raise RunInputError(
            ["/input" + (line[1:] if line.startswith("/:") else line) for line in error.errors]
        ) from None
    if conversation_id is not None:
        _check_conversation(conversation_id, target, tenant=tenant)
    run = do_create_run(
        tenant=tenant,
        target=target,
        input=run_input,
        dry_run=dry_run,
        read_only=read_only,
        conversation_id=conversation_id,
        started_by=acting_user,
    )
    run.refresh_from_db()
    return run


def _check_conversation(
    conversation_id: UUID, target: FlowDefinition | AgentDefinition, *, tenant: Tenant
) -> None:
    if not isinstance(target, AgentDefinition):
        raise RunInputError(["/conversationId: only an agent turn continues a conversation"])
    turns = Run.objects.filter(tenant=tenant, conversation_id=conversation_id)
    latest = turns.order_by("-created_at").first()
    if latest is None:
        raise RunInputError([f"/conversationId: there is no conversation {conversation_id}"])
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
    started_by=None,
) -> Run:
    """Create a queued run and execute it once this transaction commits. ``input`` is valid."""
    run = Run(
        **_identity(target),
        tenant=tenant,
        input=scrub_secrets(input),
        dry_run=dry_run,
        read_only=read_only,
        started_by=started_by,
    )
    if run.is_agent_turn:
        run.conversation_id = conversation_id or run.pk
    run.save(force_insert=True)
    enqueue_run_on_commit(run.pk)
    return run


def _identity(target: FlowDefinition | AgentDefinition) -> dict[str, str]:
    if isinstance(target, AgentDefinition):
        return {
            "flow_key": AGENT_TURN_FLOW_ID,
            "flow_version": AGENT_TURN_FLOW_VERSION,
            "agent_key": target.id,
            "agent_version": target.version,
        }
    return {"flow_key": target.id, "flow_version": target.version}


@transaction.atomic(durable=True)
def do_get_or_create_child_run(
    *,
    parent_id: UUID,
    token: str,
    node_id: str,
    agent: AgentDefinition,
    input: dict[str, Any],
    entries: Iterable[Entry] = (),
) -> Run:
    """The agent-step child run of ``node_id``, created once; the parent executes it inline."""
    parent = _locked_claimed(parent_id, token)
    child = Run.objects.filter(parent=parent, parent_node_id=node_id).first()
    if child is None:
        child = Run(
            **_identity(agent),
            tenant_id=parent.tenant_id,
            input=scrub_secrets(input),
            dry_run=parent.dry_run,
            read_only=parent.read_only,
            started_by=parent.started_by,
            parent=parent,
            parent_node_id=node_id,
        )
        child.conversation_id = child.pk
        child.save(force_insert=True)
        _append_all(parent, entries)
        parent.save(update_fields=["last_sequence", "updated_at"])
    return child


@transaction.atomic(durable=True)
def do_claim_run(run_id: UUID, *, token: str) -> Run | None:
    """Take the run for execution, or return None when it is not ours to execute: finished,
    suspended, or held by another executor whose claim has not expired."""
    run = Run.objects.select_for_update().get(pk=run_id)
    now = timezone.now()
    if run.status == RunStatus.RUNNING:
        if run.claim_expires_at is not None and run.claim_expires_at > now:
            return None
    elif run.status != RunStatus.QUEUED:
        return None
    if run.last_sequence == 0:
        append_entry(
            run,
            Entry(
                kind=JournalKind.RUN_STARTED,
                payload={"input": run.input, "dryRun": run.dry_run, "readOnly": run.read_only},
            ),
        )
    run.status = RunStatus.RUNNING
    run.claim_token = token
    run.claim_expires_at = now + _lease()
    run.started_at = run.started_at or now
    # Only what changed: the conversation and input are not written back.
    run.save(
        update_fields=[
            "status",
            "claim_token",
            "claim_expires_at",
            "started_at",
            "last_sequence",
            "updated_at",
        ]
    )
    return run


def do_renew_claim(run_id: UUID, *, token: str) -> bool:
    """Push the claim's expiry a lease on, if this executor still holds the run."""
    return bool(
        Run.objects.filter(pk=run_id, status=RunStatus.RUNNING, claim_token=token).update(
            claim_expires_at=timezone.now() + _lease()
        )
    )


def _locked_claimed(run_id: UUID, token: str) -> Run:
    """The run, locked, if this executor still holds it. Its conversation, input and output are
    left unread (and so unwritten by ``save``) unless the caller sets them."""
    run = Run.objects.select_for_update().defer("messages", "input", "output").get(pk=run_id)
    if run.status != RunStatus.RUNNING or run.claim_token != token:
        raise LostClaimError(f"run {run_id} is {run.status} and no longer held by this executor")
    return run


@transaction.atomic(durable=True)
def do_record(
    run_id: UUID,
    *,
    token: str,
    entries: Iterable[Entry],
    messages_json: str | None = None,
) -> None:
    """Record steps of a run the caller holds, and renew the claim; write its conversation if
    given, as JSON already made (the engine keeps it made as the turn grows)."""
    entries = list(entries)
    claimed = _advance_claimed(run_id, token, count=len(entries), messages_json=messages_json)
    if claimed is None:
        raise LostClaimError(f"run {run_id} is no longer held by this executor")
    last_sequence, parent_id = claimed
    run = Run(
        id=run_id, status=RunStatus.RUNNING, last_sequence=last_sequence - len(entries), parent_id=parent_id
    )
    _append_all(run, entries)


def _advance_claimed(
    run_id: UUID, token: str, *, count: int, messages_json: str | None
) -> tuple[int, UUID | None] | None:
    """In one statement, if this executor still holds the run: move its journal's sequence on by
    ``count``, renew the claim, write the conversation if given, and return the new sequence
    and the parent's id; None if the run is no longer ours.

    The engine's most frequent write (twice per tool call), so it is one UPDATE … RETURNING
    (SQLite 3.35+, PostgreSQL), which takes the row's lock as select_for_update would."""
    fields = {
        name: Run._meta.get_field(name)
        for name in (
            "id",
            "status",
            "claim_token",
            "last_sequence",
            "claim_expires_at",
            "updated_at",
            "messages",
            "parent",
        )
    }
    now = timezone.now()
    column = {name: connection.ops.quote_name(field.column) for name, field in fields.items()}
    assignments = [
        f"{column['last_sequence']} = {column['last_sequence']} + %s",
        f"{column['claim_expires_at']} = %s",
        f"{column['updated_at']} = %s",
    ]
    params: list[Any] = [
        count,
        fields["claim_expires_at"].get_db_prep_save(now + _lease(), connection),
        fields["updated_at"].get_db_prep_save(now, connection),
    ]
    if messages_json is not None:
        cast = "CAST(%s AS jsonb)" if connection.vendor == "postgresql" else "%s"
        assignments.append(f"{column['messages']} = {cast}")
        params.append(scrub_secrets_in_json(messages_json))
    params += [fields["id"].get_db_prep_value(run_id, connection), RunStatus.RUNNING, token]
    sql = (
        f"UPDATE {connection.ops.quote_name(Run._meta.db_table)} SET {', '.join(assignments)} "
        f"WHERE {column['id']} = %s AND {column['status']} = %s AND {column['claim_token']} = %s "
        f"RETURNING {column['last_sequence']}, {column['parent']}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    return row[0], (UUID(str(row[1])) if row[1] is not None else None)


@transaction.atomic(durable=True)
def do_finish_run(
    run_id: UUID,
    *,
    token: str,
    outcome: Outcome,
    entries: Iterable[Entry] = (),
    messages: list | None = None,
) -> Run:
    """End the caller's execution of a run: completed, failed, or suspended on a waitpoint.

    Locks a parent before its child, always, so that a child finishing and its parent
    suspending on it cannot deadlock, and neither misses the other.
    """
    parent_id = Run.objects.values_list("parent_id", flat=True).get(pk=run_id)
    parent = Run.objects.select_for_update().get(pk=parent_id) if parent_id else None
    run = _locked_claimed(run_id, token)
    entries = list(entries)
    if messages is not None:
        run.messages = scrub_secrets(messages)
    now = timezone.now()
    match outcome:
        case Completed(output=output):
            output = scrub_secrets(output)
            run.status, run.output, run.finished_at = RunStatus.COMPLETED, output, now
            entries.append(Entry(kind=JournalKind.RUN_COMPLETED, payload={"output": output}))
        case Failed(message=message):
            message = scrub_secrets(message)
            run.status, run.failure_message, run.finished_at = RunStatus.FAILED, message, now
            entries.append(Entry(kind=JournalKind.RUN_FAILED, payload={"failureMessage": message}))
        case Suspended(waitpoint=waitpoint, node_id=node_id):
            run.status = RunStatus.SUSPENDED
            run.waitpoint = waitpoints.on_suspend(run, scrub_secrets({**waitpoint, "nodeId": node_id}))
            entries.append(
                Entry(kind=JournalKind.WAIT_SUSPENDED, node_id=node_id, payload={"waitpoint": run.waitpoint})
            )
    _append_all(run, entries)
    run.claim_token, run.claim_expires_at = "", None
    run.save()
    if run.status == RunStatus.SUSPENDED and run.waitpoint.get("kind") == CHILD_RUN_WAITPOINT:
        child = Run.objects.select_for_update().get(pk=run.waitpoint["runId"])
        if child.is_finished:  # it finished while we were on our way to wait for it
            _resume(run, {"childStatus": child.status})
    if parent is not None and run.is_finished:
        waitpoint = parent.waitpoint or {}
        if parent.status == RunStatus.SUSPENDED and waitpoint.get("runId") == str(run.pk):
            _resume(parent, {"childStatus": run.status})
    return run


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


def resume_locked_run(run: Run, *, waitpoint_key: Mapping[str, Any], resolution: Mapping[str, Any]) -> None:
    """Resume ``run`` inside the caller's transaction, so the resolution and the resume commit together.

    Precondition: ``run`` is locked with select_for_update. ``waitpoint_key`` must match the
    run's waitpoint (e.g. ``{"kind": "approval", "callId": …}``), so that a stale or repeated
    resolution cannot resume the run at another wait.
    """
    if run.status != RunStatus.SUSPENDED:
        raise RunStateError(f"run {run.pk} is {run.status}, not suspended")
    waitpoint = run.waitpoint or {}
    if any(waitpoint.get(key) != value for key, value in waitpoint_key.items()):
        raise RunStateError(f"run {run.pk} does not wait on {dict(waitpoint_key)}")
    _resume(run, resolution)


def _resume(run: Run, resolution: Mapping[str, Any]) -> None:
    """Precondition: ``run`` is locked and suspended."""
    append_entry(
        run,
        Entry(
            kind=JournalKind.WAIT_RESUMED,
            node_id=(run.waitpoint or {}).get("nodeId", ""),
            payload={"waitpoint": run.waitpoint, "resolution": dict(resolution)},
        ),
    )
    run.status, run.waitpoint = RunStatus.QUEUED, None
    run.save(update_fields=["status", "waitpoint", "last_sequence", "updated_at"])
    enqueue_run_on_commit(run.pk)


@transaction.atomic(durable=True)
def do_cancel_run(run_id: UUID, *, reason: str = "", acting_user=None) -> Run:
    """Cancel a queued, running or suspended run and every unfinished run below it."""
    run = Run.objects.select_for_update().get(pk=run_id)
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
    append_entry(
        run,
        Entry(
            kind=JournalKind.RUN_CANCELLED,
            payload={"reason": reason, "by": acting_user.get_username() if acting_user else None},
        ),
    )
    run.status, run.finished_at, run.waitpoint = RunStatus.CANCELLED, timezone.now(), None
    run.claim_token, run.claim_expires_at = "", None
    run.save()
    waitpoints.on_cancel(run)
    for child in (
        Run.objects.select_for_update()
        .filter(parent=run)
        .exclude(status__in=[RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED])
    ):
        _cancel(child, reason="its parent run was cancelled", acting_user=acting_user)


def recover_stuck_runs(*, now=None) -> list[UUID]:
    """Queue again every running run whose executor's claim has expired (the executor died).

    The executor that picks one up takes the claim over and continues from the journal."""
    now = now or timezone.now()
    stuck = list(
        Run.objects.filter(status=RunStatus.RUNNING, claim_expires_at__lt=now).values_list("pk", flat=True)
    )
    for run_id in stuck:
        logger.warning(
            "run %s: its executor's claim expired; queued again", run_id, extra={"run_id": str(run_id)}
        )
        execute_run.enqueue(str(run_id))
    return stuck
