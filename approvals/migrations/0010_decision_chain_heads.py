from django.db import migrations


def heads_of_decision_chains(apps, schema_editor):
    """Each tenant's chain heads: its decisions', where that chain ends now (from here on it moves
    with each decision, and a decision removed from the end shows), and its audit chain's, empty."""
    Decision = apps.get_model("approvals", "Decision")
    ChainHead = apps.get_model("audit", "ChainHead")
    Tenant = apps.get_model("tenants", "Tenant")
    genesis = "sha256:" + "0" * 64
    last_of = {tenant_id: (0, genesis) for tenant_id in Tenant.objects.values_list("pk", flat=True)}
    for tenant_id, sequence, hash in Decision.objects.order_by("tenant_id", "sequence").values_list(
        "tenant_id", "sequence", "hash"
    ):
        last_of[tenant_id] = (sequence, hash)
    ChainHead.objects.bulk_create(
        [
            ChainHead(tenant_id=tenant_id, chain="decisions", sequence=sequence, hash=hash)
            for tenant_id, (sequence, hash) in last_of.items()
        ]
        + [ChainHead(tenant_id=tenant_id, chain="audit", sequence=0, hash=genesis) for tenant_id in last_of],
        ignore_conflicts=True,
    )


class Migration(migrations.Migration):

    dependencies = [
        ("approvals", "0009_principals"),
        ("audit", "0001_initial"),
    ]

    operations = [migrations.RunPython(heads_of_decision_chains, migrations.RunPython.noop)]
