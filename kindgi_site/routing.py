from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import path, re_path

from approvals.consumers import ApprovalsConsumer
from core.socket_auth import NOT_FOUND
from runs.consumers import RunConsumer


class NoSuchSocket(AsyncWebsocketConsumer):
    """A WebSocket path that names nothing: a clean close that says so."""

    async def connect(self):
        await self.accept()
        await self.close(code=NOT_FOUND)


websocket_urlpatterns = [
    # Any text: the consumer closes with 4404 when it is not a run's id.
    re_path(r"^ws/runs/(?P<run_id>[^/]+)/$", RunConsumer.as_asgi()),
    path("ws/approvals/", ApprovalsConsumer.as_asgi()),
    re_path(r"", NoSuchSocket.as_asgi()),
]
