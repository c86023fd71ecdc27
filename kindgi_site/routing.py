from django.urls import path

from approvals.consumers import ApprovalsConsumer
from runs.consumers import RunConsumer

websocket_urlpatterns = [
    path("ws/runs/<uuid:run_id>/", RunConsumer.as_asgi()),
    path("ws/approvals/", ApprovalsConsumer.as_asgi()),
]
