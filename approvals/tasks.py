from django.tasks import task

from approvals.actions.approvals import expire_due_approvals


@task()
def sweep_expired_approvals() -> int:
    """Expire due approvals (for deployments that schedule tasks rather than run the command);
    return how many."""
    return len(expire_due_approvals().done)
