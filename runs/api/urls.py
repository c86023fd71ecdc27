from django.urls import path

from runs.api import views

urlpatterns = [
    path("runs", views.RunListStartApi.as_view(), name="runs"),
    path("runs/<uuid:run_id>", views.RunDetailApi.as_view(), name="run"),
    path("runs/<uuid:run_id>/journal", views.RunJournalApi.as_view(), name="run-journal"),
    path("runs/<uuid:run_id>/cancel", views.RunCancelApi.as_view(), name="run-cancel"),
]
