from django.apps import AppConfig
from django.db.models.signals import post_delete, post_migrate, post_save


class ToolsConfig(AppConfig):
    """The catalog: the tools, agents and flows that the configured packs define."""

    name = "tools"
    verbose_name = "Catalog"

    def ready(self):
        from tenants.config import config_changed
        from tools import checks  # noqa: F401  (registers the kindgi.* system checks)
        from tools.loading import load_catalog_after_migrate
        from tools.models import AgentGateOverride

        post_migrate.connect(load_catalog_after_migrate, sender=self)
        # An admin's override changes the gates of the runs it applies to (a site-wide one, of
        # every tenant's): the processes' cached overrides follow it.
        for signal in (post_save, post_delete):
            signal.connect(config_changed, sender=AgentGateOverride, dispatch_uid=f"config-{signal}-override")
