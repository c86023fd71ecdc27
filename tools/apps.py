from django.apps import AppConfig
from django.db.models.signals import post_migrate


class ToolsConfig(AppConfig):
    """The catalog: the tools, agents and flows that the configured packs define."""

    name = "tools"
    verbose_name = "Catalog"

    def ready(self):
        from tools import checks  # noqa: F401  (registers the kindgi.* system checks)
        from tools.loading import load_catalog_after_migrate

        post_migrate.connect(load_catalog_after_migrate, sender=self)
