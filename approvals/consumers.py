"""/ws/approvals/: the tenant's approval events (created, decided, expired, cancelled), live."""

from urllib.parse import parse_qs
from uuid import UUID

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from approvals.events import approvals_group
from core.consumers import NoConnectionHopPerMessage
from core.socket_auth import KeepsCheckingAccess, refusal_at_connect, refuse, socket_identity, wants_html

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
    """The tenant's approval events, to its members; closes (4401, 4403) at connect for a caller
    who may see none, and once access is gone."""

    tenant_id = None

    async def connect(self):
        self.identity = await database_sync_to_async(socket_identity)(self.scope)
        if code := refusal_at_connect(self.identity):
            await refuse(self, code)
            return
        self.tenant_id = self.identity.tenant_id
        self.html = wants_html(self.scope)
        # An approval's page listens for that one approval only (an id, never text to echo back).
        self.approval_id = _approval_id(self.scope)
        await self.channel_layer.group_add(approvals_group(self.tenant_id), self.channel_name)
        await self.accept()
        self.keep_checking(self.tenant_id)

    async def disconnect(self, code):
        self.stop_checking()
        if self.tenant_id is not None:
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


def _approval_id(scope) -> str:
    value = parse_qs(scope.get("query_string", b"").decode()).get("approval", [""])[0]
    try:
        return str(UUID(value)) if value else ""
    except ValueError:
        return ""
