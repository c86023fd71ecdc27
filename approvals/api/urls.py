from django.urls import path

from approvals.api import views
from core import converters  # noqa: F401  (registers <anyuuid:…>)

urlpatterns = [
    path("approvals", views.ApprovalListApi.as_view(), name="approvals"),
    path("approvals/decisions", views.ApprovalDecisionsApi.as_view(), name="approval-decisions"),
    path("approvals/<anyuuid:approval_id>", views.ApprovalDetailApi.as_view(), name="approval"),
    path(
        "approvals/<anyuuid:approval_id>/complete",
        views.ApprovalCompleteApi.as_view(),
        name="approval-complete",
    ),
    path("reviewers", views.ReviewerListApi.as_view(), name="reviewers"),
    path("reviewers/register", views.ReviewerRegisterApi.as_view(), name="reviewer-register"),
    path("reviewers/me", views.ReviewerMeApi.as_view(), name="reviewer-me"),
    path("approval-rules", views.RuleListCreateApi.as_view(), name="approval-rules"),
    path("approval-rules/<int:rule_id>", views.RuleDetailApi.as_view(), name="approval-rule"),
    path("grants", views.GrantListCreateApi.as_view(), name="grants"),
    path("grants/<int:grant_id>/revoke", views.GrantRevokeApi.as_view(), name="grant-revoke"),
]
