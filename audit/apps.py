from django.apps import AppConfig
from django.db.models.signals import post_save


class AuditConfig(AppConfig):
    """The record of every configuration change, and the heads of each tenant's chains."""

    name = "audit"

    def ready(self):
        from audit.chain import start_chains

        # Every tenant's chains start with it, so that writing an entry only ever moves a head.
        post_save.connect(start_chains, sender="tenants.Tenant", dispatch_uid="audit-start-chains")
