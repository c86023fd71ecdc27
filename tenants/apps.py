from django.apps import AppConfig


class TenantsConfig(AppConfig):
    """The organisations that own users, reviewers, runs, approvals and rules."""

    name = "tenants"

    def ready(self):
        from tenants import schema  # noqa: F401  (registers the API-token scheme with drf-spectacular)
