from django.apps import AppConfig
from django.db.models.signals import m2m_changed, post_delete, post_save


class ApprovalsConfig(AppConfig):
    """Approvals, reviewers, tenant approval rules and the reviewer console."""

    name = "approvals"

    def ready(self):
        from approvals.actions.approvals import expire_due_approvals
        from approvals.escalation import escalate_due_approvals
        from approvals.grants import Grants
        from approvals.models import ApprovalRule, Grant, Webhook
        from approvals.notifications import deliver_due_notifications, remind_due_approvals
        from approvals.rules import rules_of_tenant
        from approvals.waitpoints import ApprovalWaitpoints
        from approvals.webhooks import deliver_due_webhooks
        from runs import waitpoints
        from runs.engine.waitpoints import APPROVAL
        from runs.grants import register_grant_source
        from runs.rules import register_rule_source
        from runs.sweeper import register_sweep
        from tenants.config import config_changed, config_members_changed

        # What every process keeps compiled of a tenant's rules and webhook follows a change,
        # whichever way it is made.
        for signal in (post_save, post_delete):
            for model in (ApprovalRule, Webhook, Grant):
                signal.connect(config_changed, sender=model, dispatch_uid=f"config-{signal}-{model.__name__}")
        m2m_changed.connect(
            config_members_changed,
            sender=ApprovalRule.reviewers.through,
            dispatch_uid="config-rule-reviewers",
        )
        waitpoints.register(APPROVAL, ApprovalWaitpoints())
        register_rule_source(rules_of_tenant)
        register_grant_source(Grants())
        register_sweep("escalate approvals", escalate_due_approvals)
        register_sweep("expire approvals", expire_due_approvals)
        register_sweep("deliver webhooks", deliver_due_webhooks)
        register_sweep("remind reviewers", remind_due_approvals)
        register_sweep("mail notifications", deliver_due_notifications)
