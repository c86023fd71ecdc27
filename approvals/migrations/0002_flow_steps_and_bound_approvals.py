import hashlib
import json

from django.conf import settings
from django.db import migrations, models
import django.db.models.deletion


def bind_existing_approvals(apps, schema_editor):
    """Approvals made before this migration bind their call's digest too (as
    runs.engine.waitpoints.call_digest makes it, copied here so that this migration never
    changes), and know who started their run, for four-eyes."""
    Approval = apps.get_model("approvals", "Approval")
    Run = apps.get_model("runs", "Run")
    for approval in Approval.objects.all().iterator():
        canonical = json.dumps(
            {"toolId": approval.tool_key, "toolVersion": approval.tool_version, "arguments": approval.arguments},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        approval.digest = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
        run = Run.objects.get(pk=approval.run_id)
        while run.started_by_id is None and run.parent_id is not None:
            run = Run.objects.get(pk=run.parent_id)
        approval.started_by_id = run.started_by_id
        approval.save(update_fields=["digest", "started_by"])


class Migration(migrations.Migration):
    """Approvals of flow tool steps (flow and node, no agent), the digest an approval binds, who
    started the run (for four-eyes), and one approval per call and subject."""

    dependencies = [
        ("approvals", "0001_initial"),
        ("runs", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="approval", name="approvals_one_per_tool_call"),
        migrations.AddField(
            model_name="approval",
            name="digest",
            field=models.CharField(default="", max_length=80),
            preserve_default=False,
        ),
        migrations.AddField(
            model_name="approval",
            name="flow_key",
            field=models.CharField(blank=True, max_length=200, verbose_name="flow id"),
        ),
        migrations.AddField(
            model_name="approval",
            name="node_id",
            field=models.CharField(blank=True, max_length=100),
        ),
        migrations.AddField(
            model_name="approval",
            name="started_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="approval",
            name="agent_key",
            field=models.CharField(blank=True, max_length=200, verbose_name="agent id"),
        ),
        migrations.AlterField(
            model_name="approval",
            name="agent_version",
            field=models.CharField(blank=True, max_length=64),
        ),
        migrations.AlterField(
            model_name="approvalrule",
            name="gate",
            field=models.CharField(
                choices=[
                    ("always_ask", "always ask"),
                    ("ask_once", "ask on first use in a conversation"),
                    ("never_ask", "never ask"),
                    ("deny", "deny (the model is told why)"),
                ],
                help_text="The tenant's gate for the calls this rule matches. A call runs under the stricter "
                "of this and its agent's own gate: deny always wins, an ask from either side asks (needing "
                "the higher role), and an agent's never_ask cannot lift this rule's ask or deny.",
                max_length=16,
            ),
        ),
        migrations.RunPython(bind_existing_approvals, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="approval",
            constraint=models.UniqueConstraint(
                fields=("run", "call_id", "subject_kind"), name="approvals_one_per_tool_call_and_subject"
            ),
        ),
    ]
