from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    """Approvals, reviewers, tenant approval rules and the reviewer console."""

    name = "approvals"
