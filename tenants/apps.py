from django.apps import AppConfig


class TenantsConfig(AppConfig):
    """The organisations that own users, reviewers, runs, approvals and rules."""

    name = "tenants"
