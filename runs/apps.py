from django.apps import AppConfig


class RunsConfig(AppConfig):
    """Runs of flows and agent turns, their journals and the engine that executes them."""

    name = "runs"
