"""Schedules: writing them, and the sweep that starts their runs when a tick is due.

A schedule runs a tenant's agent or flow on a cron expression (UTC), with a fixed input, on behalf
of its owner. No person starts its runs (``trigger: schedule``): each app's calls use the owner's
connection, and each such use waits for the owner's yes, as in any run no person started.

A tick is claimed with one conditional UPDATE (the next tick moves on only if it is still the one
this process read), so that however many sweepers look at once, exactly one starts its run. The
next tick is counted from now, so that ticks missed while nothing swept give one run, not many.
A claimed tick whose run could not start is recorded on the schedule (``last_error``), not retried:
a schedule's run happens at most once a tick.
"""

import logging
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from audit.actions import SettingKind, do_delete_setting, do_save_setting
from core.errors import DomainError
from core.secrets import provider_secrets
from core.sweeps import Sweep
from runs.actions import check_start_run
from runs.connection_sources import app_names
from runs.engine.inputs import validate_run_input
from runs.exceptions import RunInputError, ScheduleForbiddenError, ScheduleInputError
from runs.models import Run, Schedule, Trigger
from tenants.authority import own_refusal
from tools.registry import get_registry

logger = logging.getLogger("kindgi.runs")

# The fields a schedule is written with (``owner`` as a username).
SCHEDULE_FIELDS = ("name", "agent_key", "flow_key", "input", "cron", "owner", "enabled")
CRON_EXAMPLE = "minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5 for 09:00 UTC on weekdays"


def _croniter():
    # Imported when a schedule is written or due, not with Django at every start.
    from croniter import croniter

    return croniter


# A range of one value ("5-5", "APR-APR", "5-5/2"), which croniter reads as "*": that one value.
_ONE_VALUE_RANGE = re.compile(r"(?<![\w-])(\w+)-\1(?:/\d+)?(?![\w/-])", re.IGNORECASE)


def _as_written(cron: str) -> str:
    """``cron`` as croniter must be given it to run when it says."""
    return _ONE_VALUE_RANGE.sub(r"\1", cron.strip())


def cron_error(cron: Any) -> str | None:
    """Why ``cron`` is not an expression a schedule runs on, or None."""
    if not isinstance(cron, str) or not cron.strip():
        return f"a cron expression is required ({CRON_EXAMPLE})"
    cron = cron.strip()
    if not cron.startswith("@") and len(cron.split()) != 5:
        return f"{cron!r} has {len(cron.split())} fields, not 5 ({CRON_EXAMPLE})"
    if not _croniter().is_valid(_as_written(cron)):
        return f"{cron!r} is not a cron expression ({CRON_EXAMPLE})"
    if next_tick(cron, timezone.now()) is None:
        return f"{cron!r} names no day that comes (such as February 30), so it would never run"
    return None


def next_tick(cron: str, after: datetime) -> datetime | None:
    """The first tick of ``cron`` after ``after`` (UTC); None when none ever comes (a valid
    expression may name a day that does not exist, such as February 30)."""
    from croniter import CroniterError

    try:
        return _croniter()(_as_written(cron), after.astimezone(UTC)).get_next(datetime)
    except CroniterError:
        return None


def schedule_errors(fields: Mapping[str, Any], *, tenant) -> list[str]:
    """What is wrong with a schedule of ``tenant`` holding ``fields`` (``owner`` a user, or None
    when the name given is nobody of the tenant), as ``/<field>: <message>`` lines."""
    errors = []
    name = fields.get("name")
    if not isinstance(name, str) or not name.strip():
        errors.append("/name: a name is required")
    elif len(name.strip()) > 200:
        errors.append("/name: at most 200 characters")
    agent, flow = fields.get("agent_key") or "", fields.get("flow_key") or ""
    registry = get_registry()
    target = None
    if bool(agent) == bool(flow):
        errors.append("/agentId: give exactly one of agentId and flowId")
    elif agent and (target := registry.agent(agent)) is None:
        errors.append(f"/agentId: there is no agent {agent!r}")
    elif flow and (target := registry.flow(flow)) is None:
        errors.append(f"/flowId: there is no flow {flow!r}")
    run_input = fields.get("input")
    if not isinstance(run_input, dict):
        errors.append("/input: must be an object")
    elif target is not None:
        try:
            validate_run_input(target, run_input, secrets=provider_secrets())
        except RunInputError as error:
            errors += ["/input" + (line[1:] if line.startswith("/:") else line) for line in error.errors]
    if problem := cron_error(fields.get("cron")):
        errors.append(f"/cron: {problem}")
    owner = fields.get("owner")
    membership = getattr(owner, "membership", None)
    if owner is None or membership is None or membership.tenant_id != tenant.pk or not owner.is_active:
        errors.append("/owner: a person of this tenant is required")
    elif membership.is_service_account:
        errors.append(f"/owner: {owner.get_username()} is a service account; a schedule is a person's")
    if not isinstance(fields.get("enabled"), bool):
        errors.append("/enabled: must be true or false")
    return errors


def check_save_schedule(
    *, tenant, fields: Mapping[str, Any], schedule: Schedule | None = None, acting_user, surface: str
) -> Schedule:
    """Create a schedule of ``tenant``, or change ``schedule`` (only the ``fields`` given): the
    one way schedules are written, from the API and the admin alike. ``owner``: a username or
    a user. A schedule runs on its owner's behalf, so a member makes and changes only their own;
    making or changing one for someone else is for whoever may change the tenant's configuration
    (``tenants.authority``)."""
    unknown = sorted(set(fields) - set(SCHEDULE_FIELDS))
    if unknown:
        raise ScheduleInputError([f"/{name}: not a field of a schedule" for name in unknown])
    fields = dict(fields)
    if isinstance(fields.get("owner"), str):
        fields["owner"] = (
            get_user_model()
            .objects.select_related("membership")
            .filter(username=fields["owner"], membership__tenant=tenant)
            .first()
        )
    for owner in {schedule.owner if schedule is not None else None, fields.get("owner")} - {None}:
        if (refusal := own_refusal(acting_user, owner=owner, tenant=tenant, surface=surface)) is not None:
            raise ScheduleForbiddenError(
                f"you may not make or change a schedule of {owner.get_username()}: {refusal}"
            )
    current = {name: getattr(schedule, name) for name in SCHEDULE_FIELDS} if schedule is not None else {}
    merged = {"input": {}, "enabled": True} | current | fields
    if errors := schedule_errors(merged, tenant=tenant):
        raise ScheduleInputError(errors)
    merged["name"] = merged["name"].strip()
    merged["cron"] = merged["cron"].strip()
    taken = Schedule.objects.filter(tenant=tenant, name=merged["name"])
    if schedule is not None:
        taken = taken.exclude(pk=schedule.pk)
    if taken.exists():
        raise ScheduleInputError([f"/name: this tenant already has a schedule {merged['name']!r}"])
    return do_save_schedule(
        tenant=tenant, fields=merged, schedule=schedule, acting_user=acting_user, surface=surface
    )


def schedule_snapshot(schedule: Schedule) -> dict[str, Any]:
    return {name: getattr(schedule, name) for name in SCHEDULE_FIELDS if name != "owner"} | {
        "owner": schedule.owner.get_username()
    }


SCHEDULE = SettingKind(noun="schedule", snapshot=schedule_snapshot, label=lambda schedule: schedule.name)


# Not durable: the admin saves inside a transaction of its own.
@transaction.atomic
def do_save_schedule(
    *, tenant, fields: Mapping[str, Any], schedule: Schedule | None, acting_user, surface: str
) -> Schedule:
    """Write a valid schedule, and its record in the tenant's audit chain. Its next tick is
    counted again from now when its cron changes, or when it is turned on (ticks it missed while
    off are not run)."""
    schedule = schedule or Schedule(tenant=tenant)
    # As stored, not as given: the admin's form has set the new values on it already.
    before = (
        None
        if schedule._state.adding
        else Schedule.objects.filter(pk=schedule.pk).values("cron", "enabled").first()
    )
    recount = before is None or before["cron"] != fields["cron"] or not before["enabled"]
    recount = recount or schedule.next_run_at is None
    for name, value in fields.items():
        setattr(schedule, name, value)
    schedule.tenant = tenant
    if recount:
        schedule.next_run_at = next_tick(schedule.cron, timezone.now())
    return do_save_setting(schedule, kind=SCHEDULE, tenant=tenant, acting_user=acting_user, surface=surface)


def check_delete_schedule(schedule: Schedule, *, acting_user, surface: str) -> None:
    """Delete a schedule: its owner's, or whoever may change the tenant's configuration."""
    refusal = own_refusal(acting_user, owner=schedule.owner, tenant=schedule.tenant, surface=surface)
    if refusal is not None:
        raise ScheduleForbiddenError(f"you may not delete this schedule: {refusal}")
    do_delete_setting(
        schedule, kind=SCHEDULE, tenant=schedule.tenant, acting_user=acting_user, surface=surface
    )


def start_due_schedules(*, now=None, limit: int | None = None) -> Sweep:
    """Start one run for each enabled schedule whose tick is due, the longest due first."""
    now = now or timezone.now()
    sweep = Sweep()
    due = Schedule.objects.filter(enabled=True, next_run_at__lte=now).order_by("next_run_at")
    for schedule in due.select_related("tenant", "owner")[:limit]:
        if not claim_tick(schedule, now=now):
            continue  # another sweeper took this tick
        try:
            run = start_scheduled_run(schedule)
        except DomainError as error:
            Schedule.objects.filter(pk=schedule.pk).update(last_error=str(error)[:2000])
            logger.warning("schedule %s (%s): no run started: %s", schedule.name, schedule.pk, error)
            sweep.left.append(f"schedule {schedule.pk}: {error}")
            continue
        Schedule.objects.filter(pk=schedule.pk).update(last_run=run, last_error="")
        sweep.done.append(run.pk)
    return sweep


def claim_tick(schedule: Schedule, *, now) -> bool:
    """Whether this process takes ``schedule``'s due tick: only if its next tick is still the one
    read, so that of several sweepers reading the same tick, one moves it on and runs it."""
    claimed = Schedule.objects.filter(pk=schedule.pk, enabled=True, next_run_at=schedule.next_run_at).update(
        next_run_at=next_tick(schedule.cron, now), last_run_at=now
    )
    return claimed == 1


def start_scheduled_run(schedule: Schedule) -> Run:
    """A run of the schedule's agent or flow, started by no person, on its owner's behalf (its
    principal): each app's calls use the owner's connection, after the owner's yes."""
    owner = schedule.owner.get_username()
    return check_start_run(
        tenant=schedule.tenant,
        agent_id=schedule.agent_key or None,
        flow_id=schedule.flow_key or None,
        input=schedule.input,
        trigger=Trigger.SCHEDULE,
        principal=schedule.owner,
        connections={app: owner for app in sorted(app_names(schedule.tenant_id))},
    )
