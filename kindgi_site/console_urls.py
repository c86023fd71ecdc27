from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from approvals.console import grants, links, rules
from approvals.console import views as approvals
from audit import console as audit
from connections import console as connections
from core import converters  # noqa: F401  (registers <anyuuid:…>)
from mail import console as mail
from runs import console as runs
from tenants import passkeys_console as passkeys
from tenants.signin import SignInView

app_name = "console"

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="console:queue"), name="home"),
    path("login/", SignInView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("queue/", approvals.queue, name="queue"),
    path("approvals/<anyuuid:approval_id>/", approvals.approval_page, name="approval"),
    path("approvals/<anyuuid:approval_id>/panel/", approvals.approval_panel, name="approval-panel"),
    path("approvals/<anyuuid:approval_id>/step-up/", approvals.approval_step_up, name="approval-step-up"),
    path("approvals/bulk/", approvals.bulk_decide, name="bulk"),
    path("decide/<str:token>/", links.decision_link, name="decision-link"),
    path("decide/<str:token>/step-up/", links.decision_link_step_up, name="decision-link-step-up"),
    path("passkeys/", passkeys.passkeys_page, name="passkeys"),
    path("notifications/", approvals.notification_settings, name="notifications"),
    path("insight/", approvals.insight, name="insight"),
    path("rules/", rules.rules_page, name="rules"),
    path("grants/", grants.grants_page, name="grants"),
    path("grants/<int:grant_id>/revoke/", grants.revoke, name="grant-revoke"),
    path("runs/", runs.run_list, name="runs"),
    path("runs/<anyuuid:run_id>/", runs.run_page, name="run"),
    path("runs/<anyuuid:run_id>/live/", runs.run_live, name="run-live"),
    path("runs/<anyuuid:run_id>/cancel/", runs.run_cancel, name="run-cancel"),
    path("connections/", connections.connections_page, name="connections"),
    path("connections/connect/", connections.connect, name="connect"),
    path("connections/callback/", connections.callback, name="connection-callback"),
    path("connections/<anyuuid:connection_id>/disconnect/", connections.disconnect, name="disconnect"),
    path("mail/", mail.mailboxes_page, name="mailboxes"),
    path("mail/<anyuuid:mailbox_id>/", mail.mailbox_page, name="mailbox"),
    path("audit/", audit.audit_page, name="audit"),
]
