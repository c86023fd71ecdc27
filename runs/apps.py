from django.apps import AppConfig


class RunsConfig(AppConfig):
    """Runs of flows and agent turns, their journals and the engine that executes them."""

    name = "runs"

    def ready(self):
        from runs.actions import recover_stuck_runs
        from runs.schedules import start_due_schedules
        from runs.sweeper import register_sweep
        from runs.wakeup import notify_workers  # noqa: F401  (connects the signal's receiver)
        from tenants.idempotency import forget_old_keys

        register_sweep("recover runs", recover_stuck_runs)
        register_sweep("start schedules", start_due_schedules)
        register_sweep("forget idempotency keys", forget_old_keys)
