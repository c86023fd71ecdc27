from django.apps import AppConfig


class ApprovalsConfig(AppConfig):
    """Approvals, reviewers, tenant approval rules and the reviewer console."""

    name = "approvals"

    def ready(self):
        from approvals.actions import expire_due_approvals
        from approvals.escalation import escalate_due_approvals
        from approvals.notifications import deliver_due_notifications, remind_due_approvals
        from approvals.rules import rules_of_tenant
        from approvals.waitpoints import ApprovalWaitpoints
        from approvals.webhooks import deliver_due_webhooks
        from runs import waitpoints
        from runs.engine.waitpoints import APPROVAL
        from runs.rules import register_rule_source
        from runs.sweeper import register_sweep

        waitpoints.register(APPROVAL, ApprovalWaitpoints())
        register_rule_source(rules_of_tenant)
        register_sweep("escalate approvals", escalate_due_approvals)
        register_sweep("expire approvals", expire_due_approvals)
        register_sweep("deliver webhooks", deliver_due_webhooks)
        register_sweep("remind reviewers", remind_due_approvals)
        register_sweep("mail notifications", deliver_due_notifications)
