from django.urls import path

from connections.api import views
from core import converters  # noqa: F401  (registers <anyuuid:…>)

urlpatterns = [
    path("connection-apps", views.AppListApi.as_view(), name="connection-apps"),
    path("connections", views.ConnectionListStartApi.as_view(), name="connections"),
    path("connections/<anyuuid:connection_id>", views.ConnectionApi.as_view(), name="connection"),
]
