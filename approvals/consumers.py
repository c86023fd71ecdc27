"""/ws/approvals/: the tenant's approval events (created, decided, expired, cancelled), live."""

from urllib.parse import parse_qs
from uuid import UUID

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from approvals.events import approvals_group
from core.consumers import NoConnectionHopPerMessage
from core.socket_auth import FORBIDDEN, KeepsCheckingAccess, socket_identity, wants_html

# For the console's approval page: fetch its decision panel again (decided elsewhere, expired).
REFRESH_APPROVAL = (
    '<div id="approval-refresh" hx-swap-oob="true" hx-get="/console/approvals/{id}/panel/" '
    'hx-trigger="load" hx-sync="#live:replace" hx-target="#decision-panel" hx-swap="outerHTML"></div>'
)
# For the console: have htmx fetch the queue again, with the filters on the page.
REFRESH_QUEUE = (
    '<div id="queue-refresh" hx-swap-oob="true" hx-get="/console/queue/" hx-include="#queue-filters" '
    'hx-trigger="load" hx-sync="#live:replace" hx-target="#approval-list"></div>'
)


class ApprovalsConsumer(NoConnectionHopPerMessage, KeepsCheckingAccess, AsyncJsonWebsocketConsumer):
    """The tenant's approval events, to its members; closes (4401, 4403) once access is gone."""

    async def connect(self):
        self.tenant_id = await self._tenant_of_user()
        if self.tenant_id is None:
            await self.close(code=FORBIDDEN)
            return
        self.html = wants_html(self.scope)
        # An approval's page listens for that one approval only (an id, never text to echo back).
        self.approval_id = _approval_id(self.scope)
        await self.channel_layer.group_add(approvals_group(self.tenant_id), self.channel_name)
        await self.accept()
        self.keep_checking(self.tenant_id)

    async def disconnect(self, code):
        self.stop_checking()
        if getattr(self, "tenant_id", None) is not None:
            await self.channel_layer.group_discard(approvals_group(self.tenant_id), self.channel_name)

    async def approval_event(self, event):
        # The JSON was made once by the sender, not once per listening socket.
        if self.access_gone:
            return
        if not self.html:
            await self.send(text_data=event["text"])
        elif not self.approval_id:
            await self.send(text_data=REFRESH_QUEUE)
        elif event.get("approvalId") == self.approval_id:
            await self.send(text_data=REFRESH_APPROVAL.format(id=self.approval_id))

    @database_sync_to_async
    def _tenant_of_user(self):
        self.identity = socket_identity(self.scope)
        return self.identity.tenant_id if self.identity else None


def _approval_id(scope) -> str:
    value = parse_qs(scope.get("query_string", b"").decode()).get("approval", [""])[0]
    try:
        return str(UUID(value)) if value else ""
    except ValueError:
        return ""
