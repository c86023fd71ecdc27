"""A run's journal and claim: what executors write, each in one transaction under the run's lock.

An executor takes a run with ``do_claim_run`` and a token of its own; everything it records
after (``do_record``, ``do_get_or_create_child_run``, ``do_finish_run``) carries the token, and
a call whose claim is gone raises ``LostClaimError`` and changes nothing. Entries are published
to the run's channel groups once their transaction commits.
"""

from collections.abc import Callable, Iterable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple
from uuid import UUID

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.utils import timezone

from core.conf import setting
from core.prepared import Param, Prepared
from core.rows import insert_rows, insert_values, update_row
from core.secrets import scrub_secrets, scrub_secrets_in_json
from kindgi import AgentDefinition
from runs import waitpoints
from runs.engine.entries import Entry, EntryKind
from runs.engine.outcomes import Completed, Failed, Outcome, Suspended
from runs.engine.policy import PolicyContext
from runs.engine.waitpoints import CHILD_RUN
from runs.exceptions import LostClaimError
from runs.journal_statements import (
    ENTRY_COLUMNS,
    STARTED_PAYLOAD,
    WrittenEntry,
    advance_sql,
    claim_sql,
    entry_params,
    writes_in_one_statement,
)
from runs.metrics import TOOL_CALL_SECONDS
from runs.models import AGENT_TURN_FLOW_ID, AGENT_TURN_FLOW_VERSION, JournalEntry, Run, RunStatus
from tenants.models import Tenant


def _lease() -> timedelta:
    return timedelta(seconds=setting("KINDGI_RUN_LEASE_SECONDS"))


@dataclass(slots=True)
class HeldRun:
    """What appending to a run's journal needs of it, for a writer that holds the run's claim
    and has not read it (making a ``Run`` costs more than the entries it carries)."""

    pk: UUID
    status: str
    parent_id: UUID | None
    last_sequence: int


def append_entries(run: Run | HeldRun, entries: Iterable[Entry]) -> list[WrittenEntry]:
    """Append entries in one statement and have them published together once the transaction
    commits.

    Precondition: ``run`` is locked (select_for_update, or the claim's UPDATE) in this
    transaction, so ``last_sequence`` is ours to bump."""
    written = _written(run.last_sequence, list(entries), timezone.now())
    if written:
        run.last_sequence = written[-1].sequence
        # One INSERT, built for them: the journal's most frequent write. Nothing reads the
        # entries' ids back (they are known by run and sequence).
        insert_values(JournalEntry, ENTRY_COLUMNS, [(run.pk, *entry) for entry in written])
        # Published after commit with the run as it stands then, so the events' status is final.
        transaction.on_commit(lambda: publish_now(run, written))
    return written


def record_on_locked(run: Run, entries: Iterable[Entry]) -> None:
    """Journal ``entries`` on a run that the caller, not its executor, has locked in this
    transaction (an approval's escalation step), and write the run's new sequence."""
    append_entries(run, entries)
    update_row(run, ["last_sequence", "updated_at"])


def _written(after: int, entries: list[Entry], now: datetime) -> list[WrittenEntry]:
    """``entries`` as they are written after sequence ``after``: numbered, their payloads
    scrubbed of secrets."""
    return [
        WrittenEntry(
            after + place,
            entry.kind,
            entry.node_id,
            now,
            entry.duration_ms,
            scrub_secrets(entry.payload or {}),
        )
        for place, entry in enumerate(entries, start=1)
    ]


def publish_now(run: Run | HeldRun, entries: list[WrittenEntry]) -> None:
    from core.channels import send_to_groups
    from runs.events import entry_event, run_group

    groups = [run_group(run.pk)] + ([run_group(run.parent_id)] if run.parent_id else [])
    send_to_groups(groups, lambda: [entry_event(run, entry) for entry in entries])


def identity_of(target: Any) -> dict[str, str]:
    """The flow (and agent) a run of ``target`` runs: an agent's turn is a run of ``agent.turn``."""
    if isinstance(target, AgentDefinition):
        return {
            "flow_key": AGENT_TURN_FLOW_ID,
            "flow_version": AGENT_TURN_FLOW_VERSION,
            "agent_key": target.id,
            "agent_version": target.version,
        }
    return {"flow_key": target.id, "flow_version": target.version}


class Claim(NamedTuple):
    run: Run
    # The run's whole journal when the claim knows it (it just started the run), else None.
    journal: list[WrittenEntry] | None
    # The run's policy context, without connections, when whoever claimed it built one (a
    # decision judging an edit), else None.
    context: PolicyContext | None = None


CLAIM_FIELDS = ("claim_token", "claim_expires_at", "started_at")


def _claimed_by(run: Run, token: str) -> None:
    now = timezone.now()
    run.status, run.claim_token, run.claim_expires_at = RunStatus.RUNNING, token, now + _lease()
    run.started_at = run.started_at or now


def start_claimed(run: Run, *, token: str) -> Claim:
    """Save a new run already claimed by the caller, with its first entry: for a run this
    process executes as soon as the transaction commits. Precondition: inside the transaction
    that makes the run, which is not saved yet."""
    _claimed_by(run, token)
    started = _started_payload(run)
    # The entry first, so that the run's row is written once with its sequence: the foreign
    # key to the run is checked when the transaction commits (Django makes them deferred).
    written = append_entries(run, [Entry(kind=EntryKind.RUN_STARTED, payload=started)])
    insert_rows([run])
    return Claim(run, written)


def do_claim_run(run_id: UUID, *, token: str) -> Claim | None:
    """Take the run for execution, or return None when it is not ours to execute: finished,
    suspended, or held by another executor whose claim has not expired. The run comes with its
    tenant (read, not locked), which its tools are told of."""
    if writes_in_one_statement(connections[DEFAULT_DB_ALIAS]):
        return _claim_in_one_statement(run_id, token)
    return _claim_locked(run_id, token)


@transaction.atomic(durable=True)
def _claim_locked(run_id: UUID, token: str) -> Claim | None:
    run = _RUN_TO_CLAIM.one_or_none(run=run_id)
    if run is None:
        raise Run.DoesNotExist(f"there is no run {run_id}")
    now = timezone.now()
    if run.status == RunStatus.RUNNING:
        if run.claim_expires_at is not None and run.claim_expires_at > now:
            return None
    elif run.status != RunStatus.QUEUED:
        return None
    journal = None
    if run.last_sequence == 0:
        journal = append_entries(run, [Entry(kind=EntryKind.RUN_STARTED, payload=_started_payload(run))])
    run.status = RunStatus.RUNNING
    run.claim_token = token
    run.claim_expires_at = now + _lease()
    run.started_at = run.started_at or now
    # Only what changed: the conversation and input are not written back.
    update_row(run, ["status", *CLAIM_FIELDS, "last_sequence", "updated_at"])
    return Claim(run, journal)


# Each worker's claim of each run it takes: compiled once per connection.
_RUN_TO_CLAIM = Prepared(
    lambda: (
        Run.objects.select_for_update(of=("self",))
        .select_related("tenant")
        .filter(pk=Param("run", Run._meta.pk))
        .order_by()
    )
)


def _claim_in_one_statement(run_id: UUID, token: str) -> Claim | None:
    """``do_claim_run`` on PostgreSQL: the claim is an UPDATE whose WHERE says when the run is
    ours to take, writing a run's first entry (run.started) in the same statement when it has
    none, and the tenant a read by its key. Two round trips, where a transaction of a locking
    read and a write was four; every task a worker takes claims its run first.

    Two executors claiming at once: the second UPDATE waits for the first, then finds the run
    no longer claimable (PostgreSQL checks the WHERE again on the row the first one wrote)."""
    now = timezone.now()
    params = [
        RunStatus.RUNNING,
        token,
        now + _lease(),
        now,
        now,
        run_id,
        RunStatus.QUEUED,
        RunStatus.RUNNING,
        now,
    ]
    params += [EntryKind.RUN_STARTED, now]
    claimed = list(Run.objects.raw(claim_sql(), params))
    if not claimed:
        if not Run.objects.filter(pk=run_id).exists():
            raise Run.DoesNotExist(f"there is no run {run_id}")
        return None
    run = claimed[0]
    run.tenant = _TENANT_OF_RUN.one_or_none(tenant=run.tenant_id)
    journal = None
    if run.started_now:
        journal = [WrittenEntry(1, EntryKind.RUN_STARTED, "", now, None, _started_payload(run))]
        transaction.on_commit(lambda: publish_now(run, journal))
    return Claim(run, journal)


def _started_payload(run: Run) -> dict[str, Any]:
    return {label: getattr(run, name) for label, name in STARTED_PAYLOAD}


_TENANT_OF_RUN = Prepared(lambda: Tenant.objects.filter(pk=Param("tenant", Tenant._meta.pk)))


def do_keep_trace_context(run_id: UUID, traceparent: str) -> None:
    """Keep the trace ``run_id``'s spans continue, unless it keeps one already: a run that
    nothing traced was made in (a schedule's, a mail's, one made while traces were off) has its
    trace started by its first execution traced. One statement, taking no lock."""
    Run.objects.filter(pk=run_id, trace_context="").update(trace_context=traceparent)


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


def do_record(
    run_id: UUID,
    *,
    token: str,
    entries: Iterable[Entry],
    messages_json: str | None = None,
    also: Callable[[], None] | None = None,
) -> None:
    """Record steps of a run the caller holds, and renew the claim; write its conversation if
    given, as JSON already made (the engine keeps it made as the turn grows). ``also``: more to
    write in the same transaction, once the claim is known to hold (budgets' charges)."""
    entries = list(entries)
    with _step_transaction(also_writes=also is not None):
        advanced = _advance_claimed(run_id, token, entries, messages_json=messages_json)
        if advanced is None:
            raise LostClaimError(f"run {run_id} is no longer held by this executor")
        if also is not None:
            also()
        parent_id, written = advanced
        held = HeldRun(run_id, RunStatus.RUNNING, parent_id, written[-1].sequence if written else 0)
        transaction.on_commit(lambda: publish_now(held, written))
    for entry in entries:
        if entry.kind in (EntryKind.TOOL_COMPLETED, EntryKind.TOOL_FAILED) and entry.duration_ms is not None:
            outcome = "completed" if entry.kind == EntryKind.TOOL_COMPLETED else "failed"
            TOOL_CALL_SECONDS.labels(tool=entry.payload["toolId"], outcome=outcome).observe(
                entry.duration_ms / 1000
            )


def _step_transaction(*, also_writes: bool):
    """The transaction a claimed step is written in: none of its own on PostgreSQL, where the
    step is one statement (``_advance_claimed``) and so commits whole by itself, unless the
    caller ``also_writes`` something else with it; a durable one otherwise.

    A transaction costs PostgreSQL two more round trips (BEGIN and COMMIT) than the statement:
    on a busy server, the round trips are most of what a worker waits for."""
    if not also_writes and writes_in_one_statement(connections[DEFAULT_DB_ALIAS]):
        return nullcontext()
    return transaction.atomic(durable=True)


def _advance_claimed(
    run_id: UUID,
    token: str,
    entries: list[Entry],
    *,
    messages_json: str | None = None,
    values: Mapping[str, Any] | None = None,
) -> tuple[UUID | None, list[WrittenEntry]] | None:
    """If this executor still holds the run: move its journal's sequence on and append
    ``entries``, renew the claim (or set it, with the run's other ``values``, by field name),
    write the conversation if given; return the parent's id and the entries as written. None if
    the run is no longer ours, and then nothing is written.

    The engine's most frequent write (twice per tool call, and once at the end of a run with no
    parent). The run's UPDATE … RETURNING takes the row's lock as select_for_update would, and
    checks the claim. On PostgreSQL the entries' INSERT goes in the same statement (a WITH that
    writes both), so the step needs no transaction of its own; SQLite has no writing WITH, so
    there the INSERT follows, and the caller's transaction holds the two together."""
    now = timezone.now()
    values = {"claim_expires_at": now + _lease(), "updated_at": now, **(values or {})}
    db = connections[DEFAULT_DB_ALIAS]  # looked up once, not at each value
    params = [len(entries)]
    for name, value in values.items():
        params.append(Run._meta.get_field(name).get_db_prep_save(value, db))
    if messages_json is not None:
        params.append(scrub_secrets_in_json(messages_json))
    key = Run._meta.pk.get_db_prep_value(run_id, db)
    params += [key, RunStatus.RUNNING, token]
    written = _written(0, entries, now)  # numbered from 1 here, renumbered once the run says from where
    in_one = writes_in_one_statement(db) and bool(written)
    if in_one:
        params += [key, len(entries)]
        for entry in written:
            params += entry_params(entry, db)
    sql = advance_sql(db.vendor, tuple(values), messages_json is not None, len(written) if in_one else 0)
    with db.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return None
    last_sequence, parent_id = row[0], (UUID(str(row[1])) if row[1] is not None else None)
    written = [entry._replace(sequence=last_sequence - len(written) + entry.sequence) for entry in written]
    if written and not in_one:
        insert_values(JournalEntry, ENTRY_COLUMNS, [(run_id, *entry) for entry in written])
    return parent_id, written


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
    """The agent-step child run of ``node_id``, created once (with ``entries`` on the parent)."""
    parent = _locked_claimed(parent_id, token)
    child = Run.objects.filter(parent=parent, parent_node_id=node_id).first()
    if child is None:
        child = Run(
            **identity_of(agent),
            tenant_id=parent.tenant_id,
            input=scrub_secrets(input),
            dry_run=parent.dry_run,
            read_only=parent.read_only,
            trigger=parent.trigger,
            started_by=parent.started_by,
            service=parent.service,
            principal_id=parent.principal_id,
            connection_owners=parent.connection_owners,
            parent=parent,
            parent_node_id=node_id,
        )
        child.conversation_id = child.pk
        child.save(force_insert=True)
        append_entries(parent, entries)
        parent.save(update_fields=["last_sequence", "updated_at"])
    return child


def do_finish_run(
    run_id: UUID,
    *,
    token: str,
    outcome: Outcome,
    entries: Iterable[Entry] = (),
    messages: list | None = None,
    parent_id: UUID | None,
    tenant=None,
    claimed: Run | None = None,
    resume: Callable[[Run, Mapping[str, Any]], Any],
) -> Run:
    """End the caller's execution of a run: completed, failed, or suspended on a waitpoint.

    Locks a parent before its child, always, so that a child finishing and its parent
    suspending on it cannot deadlock, and neither misses the other. ``parent_id``: the run's
    parent, as the claim read it (a run's parent never changes); ``tenant``: its tenant as the
    execution read it (with the configuration version it was gated by), if at hand;
    ``claimed``: the run as the claim read it, if at hand, so that a run with neither a parent
    nor a child to wait for ends in one UPDATE rather than a locking read and a write;
    ``resume``: how a run that waited on the other (its child, or its parent) goes on, in this
    transaction (``runs.dispatch.resume_locked``: the journal records, it does not dispatch).
    """
    if claimed is not None and parent_id is None and not _waits_on_a_child(outcome):
        # A suspension makes its approval with it; a run's other endings write nothing else.
        with _step_transaction(also_writes=isinstance(outcome, Suspended)):
            return _finish_alone(claimed, token=token, outcome=outcome, entries=entries, messages=messages)
    with transaction.atomic(durable=True):
        return _finish_with_others(
            run_id,
            token=token,
            outcome=outcome,
            entries=entries,
            messages=messages,
            parent_id=parent_id,
            tenant=tenant,
            resume=resume,
        )


def _finish_with_others(
    run_id: UUID,
    *,
    token: str,
    outcome: Outcome,
    entries: Iterable[Entry],
    messages: list | None,
    parent_id: UUID | None,
    tenant,
    resume: Callable[[Run, Mapping[str, Any]], Any],
) -> Run:
    parent = Run.objects.select_for_update().get(pk=parent_id) if parent_id else None
    run = _locked_claimed(run_id, token)
    if tenant is not None:
        run.tenant = tenant
    entries = list(entries)
    if messages is not None:
        run.messages = scrub_secrets(messages)
    entries.append(_ending(run, outcome))
    append_entries(run, entries)
    run.claim_token, run.claim_expires_at = "", None
    run.save()
    if run.status == RunStatus.SUSPENDED and run.waitpoint.get("kind") == CHILD_RUN:
        child = Run.objects.select_for_update().get(pk=run.waitpoint["runId"])
        if child.is_finished:  # it finished while we were on our way to wait for it
            resume(run, {"childStatus": child.status})
    if parent is not None and run.is_finished:
        waitpoint = parent.waitpoint or {}
        if parent.status == RunStatus.SUSPENDED and waitpoint.get("runId") == str(run.pk):
            resume(parent, {"childStatus": run.status})
    return run


def _waits_on_a_child(outcome: Outcome) -> bool:
    return isinstance(outcome, Suspended) and outcome.waitpoint.get("kind") == CHILD_RUN


def _finish_alone(
    run: Run, *, token: str, outcome: Outcome, entries: Iterable[Entry], messages: list | None
) -> Run:
    """``do_finish_run`` for a run no other run waits on, nor it on another: the ending is
    worked out first (a suspension's approval made), then the UPDATE that checks the claim
    writes it. If the claim is gone, that raises and the transaction takes it all back.

    ``run``: the run as the claim read it, which only this executor has changed since; it is
    returned as it now stands, with the conversation left unread unless ``messages`` gave it."""
    entries = list(entries)
    if messages is not None:
        run.messages = scrub_secrets(messages)
    entries.append(_ending(run, outcome))
    run.claim_token, run.claim_expires_at, run.updated_at = "", None, timezone.now()
    ended = {
        name: getattr(run, name)
        for name in (
            "status",
            "output",
            "failure_message",
            "finished_at",
            "waitpoint",
            "claim_token",
            "claim_expires_at",
            "updated_at",
        )
    }
    if messages is not None:
        ended["messages"] = run.messages
    advanced = _advance_claimed(run.pk, token, entries, values=ended)
    if advanced is None:
        raise LostClaimError(f"run {run.pk} is no longer held by this executor")
    written = advanced[1]
    run.last_sequence = written[-1].sequence
    transaction.on_commit(lambda: publish_now(run, written))
    if messages is None:
        run.__dict__.pop("messages", None)  # what do_record last wrote, read again if asked for
    return run


def _ending(run: Run, outcome: Outcome) -> Entry:
    """Set the run's status for ``outcome``; return the entry that says so."""
    now = timezone.now()
    match outcome:
        case Completed(output=output):
            output = scrub_secrets(output)
            run.status, run.output, run.finished_at = RunStatus.COMPLETED, output, now
            return Entry(kind=EntryKind.RUN_COMPLETED, payload={"output": output})
        case Failed(message=message):
            message = scrub_secrets(message)
            run.status, run.failure_message, run.finished_at = RunStatus.FAILED, message, now
            return Entry(kind=EntryKind.RUN_FAILED, payload={"failureMessage": message})
        case Suspended(waitpoint=waitpoint, node_id=node_id, first=first):
            run.status = RunStatus.SUSPENDED
            run.waitpoint = waitpoints.on_suspend(
                run, scrub_secrets({**waitpoint, "nodeId": node_id}), first=first
            )
            return Entry(kind=EntryKind.WAIT_SUSPENDED, node_id=node_id, payload={"waitpoint": run.waitpoint})
    raise TypeError(f"not an outcome: {outcome!r}")


def record_resumed(run: Run, resolution: Mapping[str, Any], *, claimed_by: str | None = None) -> None:
    """Journal what resolved the run's wait, and set it going: queued, or, ``claimed_by`` a
    token, claimed by the caller for executing here (``runs.dispatch`` says which).

    Precondition: ``run`` is locked and suspended."""
    append_entries(
        run,
        [
            Entry(
                kind=EntryKind.WAIT_RESUMED,
                node_id=(run.waitpoint or {}).get("nodeId", ""),
                payload={"waitpoint": run.waitpoint, "resolution": dict(resolution)},
            )
        ],
    )
    run.waitpoint = None
    if claimed_by is None:
        run.status = RunStatus.QUEUED
        update_row(run, ["status", "waitpoint", "last_sequence", "updated_at"])
        return
    _claimed_by(run, claimed_by)
    update_row(run, ["status", "waitpoint", "last_sequence", "updated_at", *CLAIM_FIELDS])
