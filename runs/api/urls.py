from django.urls import path

from core import converters  # noqa: F401  (registers <anyuuid:…>)
from runs.api import views

urlpatterns = [
    path("runs", views.RunListStartApi.as_view(), name="runs"),
    path("runs/<anyuuid:run_id>", views.RunDetailApi.as_view(), name="run"),
    path("runs/<anyuuid:run_id>/journal", views.RunJournalApi.as_view(), name="run-journal"),
    path("runs/<anyuuid:run_id>/cancel", views.RunCancelApi.as_view(), name="run-cancel"),
    path("schedules", views.ScheduleListApi.as_view(), name="schedules"),
    path("schedules/<anyuuid:schedule_id>", views.ScheduleApi.as_view(), name="schedule"),
]
