"""Deciding a run's pending approval in tests, the way reviewers do."""

from approvals.actions.decisions import check_complete_approval
from approvals.models import Approval
from runs.models import Run
from tests.factories import reviewer


def decide(run: Run, call_id: str, decision: str = "approve", rationale: str = "", **options) -> Run:
    """Decide the approval of ``call_id`` in ``run`` as a standard reviewer; return the run after."""
    from django.contrib.auth import get_user_model

    approval = Approval.objects.get(run=run, call_id=call_id)
    user = get_user_model().objects.filter(reviewer__role="admin", membership__tenant=run.tenant).first()
    user = user or reviewer(
        f"reviewer-{Approval.objects.count()}-{run.pk.hex[:6]}", role="admin", tenant=run.tenant
    )
    check_complete_approval(
        approval_id=approval.pk, acting_user=user, decision=decision, rationale=rationale or "ok", **options
    )
    run.refresh_from_db()
    return run
