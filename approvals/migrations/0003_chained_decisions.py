import hashlib
import json

from django.db import migrations, models
import django.db.models.deletion

GENESIS = "sha256:" + "0" * 64


def _hash(decision) -> str:
    # As approvals.chain.decision_hash makes it, copied so that this migration never changes.
    content = {
        "tenant": str(decision.tenant_id),
        "sequence": decision.sequence,
        "approval": str(decision.approval_id),
        "decision": decision.decision,
        "rationale": decision.rationale,
        "reviewer": decision.reviewer_id,
        "reviewerName": decision.reviewer_name,
        "reviewerRole": decision.reviewer_role_at_decision,
        "arguments": decision.arguments,
        "decidedAt": decision.decided_at.isoformat(),
        "previous": decision.previous_hash,
    }
    canonical = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def chain_existing_decisions(apps, schema_editor):
    """Decisions made before the chain join it, per tenant, in the order they were made."""
    Decision = apps.get_model("approvals", "Decision")
    previous, sequence = {}, {}
    for decision in Decision.objects.select_related("approval").order_by("decided_at", "id").iterator():
        tenant_id = decision.approval.tenant_id
        decision.tenant_id = tenant_id
        decision.sequence = sequence[tenant_id] = sequence.get(tenant_id, 0) + 1
        decision.previous_hash = previous.get(tenant_id, GENESIS)
        decision.hash = previous[tenant_id] = _hash(decision)
        decision.save(update_fields=["tenant", "sequence", "previous_hash", "hash"])


class Migration(migrations.Migration):
    """Decisions chained by hash, per tenant (approvals.chain)."""

    dependencies = [
        ("approvals", "0002_flow_steps_and_bound_approvals"),
        ("tenants", "0001_initial"),
    ]

    operations = [
        migrations.AddField(
            model_name="decision",
            name="tenant",
            field=models.ForeignKey(
                null=True, on_delete=django.db.models.deletion.PROTECT, related_name="+", to="tenants.tenant"
            ),
        ),
        migrations.AddField(model_name="decision", name="sequence", field=models.PositiveIntegerField(null=True)),
        migrations.AddField(
            model_name="decision", name="previous_hash", field=models.CharField(default="", max_length=80)
        ),
        migrations.AddField(model_name="decision", name="hash", field=models.CharField(default="", max_length=80)),
        migrations.RunPython(chain_existing_decisions, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="decision",
            name="tenant",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT, related_name="+", to="tenants.tenant"
            ),
        ),
        migrations.AlterField(model_name="decision", name="sequence", field=models.PositiveIntegerField()),
        migrations.AlterField(
            model_name="decision", name="previous_hash", field=models.CharField(max_length=80)
        ),
        migrations.AlterField(model_name="decision", name="hash", field=models.CharField(max_length=80)),
        migrations.AddConstraint(
            model_name="decision",
            constraint=models.UniqueConstraint(fields=("tenant", "sequence"), name="approvals_decision_one_per_place"),
        ),
    ]
