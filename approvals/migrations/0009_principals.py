from django.db import migrations


def principals_of_approvals(apps, schema_editor):
    """An approval's principal is its run's: for a run no person started (a schedule's, a mailbox's),
    the person it ran for, where the runs' migrations could tell."""
    Approval = apps.get_model("approvals", "Approval")
    waiting = Approval.objects.filter(principal__isnull=True, run__principal__isnull=False)
    for approval_id, principal_id in waiting.values_list("pk", "run__principal_id"):
        Approval.objects.filter(pk=approval_id).update(principal_id=principal_id)


class Migration(migrations.Migration):

    dependencies = [
        ("approvals", "0008_queue_filters_index"),
        ("runs", "0007_principals"),
        ("mail", "0002_run_principals"),
    ]

    operations = [
        migrations.RenameField(model_name="approval", old_name="started_by", new_name="principal"),
        migrations.RunPython(principals_of_approvals, migrations.RunPython.noop),
    ]
