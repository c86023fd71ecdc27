from django.db import migrations


def attribute_mail_runs(apps, schema_editor):
    """A run a mail started stands on its mailbox's owner (its principal), and so do its children."""
    Run = apps.get_model("runs", "Run")
    MailMessage = apps.get_model("mail", "MailMessage")
    started = MailMessage.objects.filter(run__isnull=False, run__principal__isnull=True)
    for run_id, owner_id in started.values_list("run_id", "mailbox__owner_id"):
        Run.objects.filter(pk=run_id, principal__isnull=True).update(principal_id=owner_id)
    while True:
        orphans = Run.objects.filter(principal__isnull=True, parent__principal__isnull=False)
        changed = sum(
            Run.objects.filter(pk=run_id).update(principal_id=principal_id)
            for run_id, principal_id in orphans.values_list("pk", "parent__principal_id")
        )
        if not changed:
            return


class Migration(migrations.Migration):

    dependencies = [
        ("mail", "0001_initial"),
        ("runs", "0007_principals"),
    ]

    operations = [migrations.RunPython(attribute_mail_runs, migrations.RunPython.noop)]
