from django.urls import include, path

urlpatterns = [
    path("", include("runs.api.urls")),
    path("", include("approvals.api.urls")),
    path("", include("tools.api.urls")),
]
