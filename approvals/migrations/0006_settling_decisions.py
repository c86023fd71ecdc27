"""The approvals decided before an approval could have several decisions: each one's decision is
the one that settled it, and an approve is its one approval given. A migration of its own, so
that on PostgreSQL these updates commit before any later migration alters the table."""

from django.db import migrations


def settling_decisions(apps, schema_editor):
    Approval = apps.get_model("approvals", "Approval")
    Decision = apps.get_model("approvals", "Decision")
    for approval_id, decision_id, reviewer_name, role, decided_at, choice, user_id in Decision.objects.values_list(
        "approval_id", "pk", "reviewer_name", "reviewer_role_at_decision", "decided_at", "decision", "reviewer__user_id"
    ).iterator():
        given = []
        if choice == "approve":
            given = [{"userId": user_id, "reviewer": reviewer_name, "role": role, "decidedAt": decided_at.isoformat()}]
        Approval.objects.filter(pk=approval_id).update(decision_id=decision_id, approvals_given=given)


class Migration(migrations.Migration):
    dependencies = [("approvals", "0005_notifications_escalation_two_person")]

    operations = [migrations.RunPython(settling_decisions, migrations.RunPython.noop)]
