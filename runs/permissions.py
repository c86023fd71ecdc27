"""Who may cancel a run: its principal (or a service token acting for them), a tenant admin of
its tenant, or a reviewer who may decide one of the calls it, or a run below it, waits on.

The API, the console and the CLI (through the API) ask ``cancel_refusal`` under the run's lock,
in ``runs.actions.check_cancel_run``; the console asks it too, to offer the button or not.
"""

from runs import waitpoints
from runs.models import FINISHED_STATUSES, Run
from runs.principals import acting_for, principal_of


def cancel_refusal(run: Run, user, *, token=None) -> str | None:
    """Why ``user`` (with ``token``, the API token it came with) may not cancel ``run``, or None
    when they may."""
    membership = getattr(user, "membership", None)
    if membership is None or membership.tenant_id != run.tenant_id:
        return "only a member of the run's tenant may cancel it"
    person = acting_for(user, token=token)
    if person is not None and person.pk == principal_of(run):
        return None
    if membership.is_tenant_admin and not membership.is_service_account:
        return None
    if person is not None and person.pk == user.pk and waitpoints.may_resolve_any(_run_and_below(run), user):
        return None
    return (
        "only the run's principal, a tenant admin, or a reviewer who may decide one of the calls it "
        "waits on may cancel it"
    )


def _run_and_below(run: Run) -> list:
    """The ids of ``run`` and of its unfinished runs below it (a flow's agent steps)."""
    found, level = [run.pk], [run.pk]
    while level:
        level = list(
            Run.objects.filter(parent_id__in=level)
            .exclude(status__in=FINISHED_STATUSES)
            .values_list("pk", flat=True)
        )
        found += level
    return found
