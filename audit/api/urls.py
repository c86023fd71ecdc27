from django.urls import path

from audit.api import views

urlpatterns = [
    path("audit", views.AuditListApi.as_view(), name="audit"),
    path("audit/heads", views.ChainHeadsApi.as_view(), name="audit-heads"),
]
