"""Reads of runs and journals."""

from typing import Any, NamedTuple

from django.db.models import Q

from core.prepared import Param, Prepared
from runs.engine.entries import RESULT_KINDS
from runs.engine.state import CallResult, RunState
from runs.exceptions import RunNotFoundError, ScheduleNotFoundError
from runs.models import JournalEntry, JournalKind, Run, RunStatus, Schedule
from tenants.selectors import owned_or_administered


def conversation_history(run: Run) -> list[dict[str, Any]]:
    """The messages of the conversation's latest completed turn before ``run``."""
    if run.conversation_id is None or run.conversation_id == run.pk:
        return []  # no conversation, or this run is its first turn
    previous = (
        Run.objects.filter(conversation_id=run.conversation_id, status=RunStatus.COMPLETED)
        .exclude(pk=run.pk)
        .order_by("-created_at")
        .only("messages")
        .first()
    )
    return list(previous.messages) if previous else []


def conversation_approvals(run: Run) -> set[str]:
    """The tools a person approved a call of in the conversation's other turns: those of the
    turns of ``run``'s principal only, so that no one inherits approvals given for another's."""
    if run.conversation_id is None or run.conversation_id == run.pk:
        # No conversation, or this is its first turn: a next turn cannot start before it ends.
        return set()
    resumed = (
        JournalEntry.objects.filter(
            run__conversation_id=run.conversation_id,
            run__principal_id=run.principal_id,
            kind=JournalKind.WAIT_RESUMED,
        )
        .exclude(run=run)
        .order_by("run_id", "sequence")
        .only("run_id", "kind", "node_id", "payload")
    )
    by_turn: dict = {}
    for entry in resumed:
        by_turn.setdefault(entry.run_id, []).append(entry)
    return {tool for entries in by_turn.values() for tool in RunState.fold(entries).approved_tools()}


def conversation_calls(run: Run) -> list[CallResult]:
    """The results of the calls the conversation's other turns of ``run``'s principal made, in
    order: what a rule that looks back over the conversation sees of them."""
    if run.conversation_id is None or run.conversation_id == run.pk:
        return []
    results = (
        JournalEntry.objects.filter(
            run__conversation_id=run.conversation_id,
            run__principal_id=run.principal_id,
            kind__in=RESULT_KINDS,
        )
        .exclude(run=run)
        .order_by("run_id", "sequence")
        .values_list("kind", "payload")
    )
    return [
        CallResult(tool_id=payload.get("toolId", ""), result=payload.get("result"), kind=kind)
        for kind, payload in results
    ]


class Replayed(NamedTuple):
    """A journal entry as ``RunState.fold`` reads it."""

    kind: str
    node_id: str
    payload: dict[str, Any] | None


_REPLAY = Prepared(
    lambda: (
        JournalEntry.objects.filter(run=Param("run", JournalEntry._meta.get_field("run")))
        .order_by("sequence")
        .values_list("kind", "node_id", "payload")
    )
)


def run_journal(run: Run) -> list[Replayed]:
    """The run's journal, in order, as ``RunState.fold`` replays it."""
    return [Replayed(*row) for row in _REPLAY.rows(run=run.pk)]


def run_list_for_tenant(tenant, *, status=None, flow_id=None, agent_id=None):
    runs = Run.objects.filter(tenant=tenant).select_related("started_by", "service", "principal")
    if status:
        runs = runs.filter(status=status)
    if flow_id:
        runs = runs.filter(flow_key=flow_id)
    if agent_id:
        runs = runs.filter(agent_key=agent_id)
    return runs.order_by("-created_at")


_RUN_OF_TENANT = Prepared(
    lambda: (
        Run.objects.select_related("started_by", "service", "principal")
        .filter(pk=Param("run", Run._meta.pk), tenant=Param("tenant", Run._meta.get_field("tenant")))
        .order_by()
    )
)


def run_get_for_tenant(tenant, run_id) -> Run:
    """The run, if it belongs to ``tenant``; otherwise it does not exist for the caller."""
    run = _RUN_OF_TENANT.one_or_none(run=run_id, tenant=tenant.pk)
    if run is None:
        raise RunNotFoundError(f"there is no run {run_id}")
    return run


def journal_after(run: Run, *, after: int, limit: int) -> list[JournalEntry]:
    return list(run.journal.filter(sequence__gt=after).order_by("sequence")[:limit])


def gated_calls_of_tenant(tenant, *, since, limit: int) -> list[JournalEntry]:
    """The latest ``limit`` calls of ``tenant``'s runs since ``since`` that went through the gate
    and say what it decided: those that ran (``tool.called``) and those it refused or a person
    rejected (``tool.refused`` with a gate), newest first, each with its run."""
    return list(
        JournalEntry.objects.filter(run__tenant=tenant, created_at__gte=since)
        .filter(Q(kind=JournalKind.TOOL_CALLED) | Q(kind=JournalKind.TOOL_REFUSED, payload__has_key="gate"))
        .select_related("run")
        .only(
            "run_id",
            "kind",
            "node_id",
            "payload",
            "created_at",
            "run__agent_key",
            "run__agent_version",
            "run__flow_key",
            "run__tenant_id",
            "run__conversation_id",
            "run__principal_id",
        )
        .order_by("-created_at", "-sequence")[:limit]
    )


def schedules_visible_to(user):
    return owned_or_administered(Schedule.objects.select_related("owner"), user)


def schedule_visible_to(user, schedule_id) -> Schedule:
    schedule = schedules_visible_to(user).filter(pk=schedule_id).first()
    if schedule is None:
        raise ScheduleNotFoundError(f"there is no schedule {schedule_id}")
    return schedule
