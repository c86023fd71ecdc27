from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    """Approvals, reviewers, tenant approval rules and the reviewer console."""

    name = "approvals"

    def ready(self):
        from approvals.waitpoints import APPROVAL, ApprovalWaitpoints
        from runs import waitpoints

        waitpoints.register(APPROVAL, ApprovalWaitpoints())
