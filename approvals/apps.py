from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    """Approvals, reviewers, tenant approval rules and the reviewer console."""

    name = "approvals"

    def ready(self):
        from approvals.rules import rules_of_tenant
        from approvals.waitpoints import ApprovalWaitpoints
        from runs import waitpoints
        from runs.engine.waitpoints import APPROVAL
        from runs.rules import register_rule_source

        waitpoints.register(APPROVAL, ApprovalWaitpoints())
        register_rule_source(rules_of_tenant)
