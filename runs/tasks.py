"""Run execution as a Django task, for whichever backend is configured (``runs.dispatch`` decides
when a run is given to it).

The executor is imported when a task runs, not when this module loads: the executor resumes
waiting runs through ``runs.dispatch``, which queues them here, and this one lazy edge keeps
that from being an import circle at load time.
"""

from uuid import UUID

from django.tasks import task


@task()
def execute_run(run_id: str) -> None:
    """Execute or resume a run. Safe to deliver twice: the executor claims the run first."""
    from runs.executor import execute

    execute(UUID(run_id))


def execute_claimed(claim, token: str):
    """Take a run this process already holds the claim of (``runs.journal.start_claimed``,
    ``record_resumed``) as far as it goes; return it as it then stands, or None."""
    from runs.executor import execute_claimed as execute_held

    return execute_held(claim, token)
