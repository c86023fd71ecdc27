import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def attribute_runs(apps, schema_editor):
    """Each run's principal, where what it was started by tells: a person's run, its starter; a
    scheduled run, its schedule's owner (the schedule whose last run it is, or the only schedule of
    its tenant with its agent or flow); a child run, its parent's. A mail-started run is
    attributed by the mail app's migration; a service's run is left without one (its token named no
    responsible person)."""
    Run = apps.get_model("runs", "Run")
    Schedule = apps.get_model("runs", "Schedule")
    Run.objects.filter(principal__isnull=True, trigger="person", started_by__isnull=False).update(
        principal=models.F("started_by")
    )
    owner_of_last_run = dict(
        Schedule.objects.filter(last_run__isnull=False).values_list("last_run_id", "owner_id")
    )
    by_target: dict = {}
    for schedule in Schedule.objects.values("tenant_id", "agent_key", "flow_key", "owner_id"):
        key = (schedule["tenant_id"], schedule["agent_key"], schedule["flow_key"])
        by_target.setdefault(key, set()).add(schedule["owner_id"])
    scheduled = Run.objects.filter(principal__isnull=True, trigger="schedule", parent__isnull=True)
    for run in scheduled.only("pk", "tenant_id", "agent_key", "flow_key").iterator():
        owner = owner_of_last_run.get(run.pk)
        if owner is None:
            target = (run.tenant_id, run.agent_key, "" if run.agent_key else run.flow_key)
            owners = by_target.get(target, set())
            owner = next(iter(owners)) if len(owners) == 1 else None
        if owner is not None:
            Run.objects.filter(pk=run.pk).update(principal_id=owner)
    inherit_from_parents(Run)


def inherit_from_parents(Run):
    """A child run's principal is its parent's (a flow's agent steps, level by level)."""
    while True:
        orphans = Run.objects.filter(principal__isnull=True, parent__principal__isnull=False)
        changed = 0
        for run_id, principal_id in orphans.values_list("pk", "parent__principal_id"):
            changed += Run.objects.filter(pk=run_id).update(principal_id=principal_id)
        if not changed:
            return


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0006_escalation_entries_and_schedules'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name='run',
            name='principal',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.RunPython(attribute_runs, migrations.RunPython.noop),
    ]
