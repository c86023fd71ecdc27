"""/ws/runs/<run id>/: a run's journal entries (and its child runs'), live, after those missed."""

from urllib.parse import parse_qs
from uuid import UUID

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.db.models import Q

from core.consumers import NoConnectionHopPerMessage
from core.lookups import one_or_none
from core.socket_auth import (
    NOT_FOUND,
    KeepsCheckingAccess,
    refusal_at_connect,
    refuse,
    socket_identity,
    wants_html,
)
from runs.events import entry_event, run_group
from runs.models import Run

# For the console: have htmx fetch the run's live parts again (see templates/console/run.html);
# a newer refresh replaces one still under way, so a slow, older answer never lands last.
REFRESH_RUN = (
    '<div id="run-refresh" hx-swap-oob="true" hx-get="{url}" hx-trigger="load" hx-sync="#live:replace" '
    'hx-target="#run-live" hx-swap="outerHTML"></div>'
)


class RunConsumer(NoConnectionHopPerMessage, KeepsCheckingAccess, AsyncJsonWebsocketConsumer):
    """Authorises at connect (session or API token, the run in the user's tenant), joins the run's
    group, then sends the entries after ``?after=`` (marked ``replayed``) and a ``replay.done``
    event with the run's status, then the live ones; each entry once and in order of its run's
    journal (one whose event never came is read from the journal). Closes (4401, 4403) once
    the caller's access is taken away. At connect it closes with 4401 or 4403 for a caller who
    may see nothing, and with 4404 for a path that names no run of the caller's tenant (none at
    all, or another tenant's: the same code, so it tells nothing of the other's runs)."""

    async def connect(self):
        run = await self._run_for_user()
        if not isinstance(run, Run):
            await refuse(self, run)
            return
        self.last_sent: dict[str, int] = {}
        self.html = wants_html(self.scope)
        await self.channel_layer.group_add(run_group(self.run_id), self.channel_name)
        await self.accept()
        self.keep_checking(run.tenant_id)
        query = parse_qs(self.scope.get("query_string", b"").decode())
        try:
            after = int(query.get("after", ["0"])[0])
        except ValueError:
            after = 0
        # What the client has of this run (it says so), and of each child run (all of it, from
        # the replay), is what a later gap is measured from.
        self.last_sent[str(self.run_id)] = max(after, 0)
        history, status = await self._history(after)
        for event in history:
            await self.journal_entry({**event, "replayed": True})
        if not self.html:
            # The replay is done: from here on, every entry is live and carries the status it left.
            await self.send_json({"type": "replay.done", "runId": str(self.run_id), "runStatus": status})

    async def disconnect(self, code):
        self.stop_checking()
        if hasattr(self, "last_sent"):
            await self.channel_layer.group_discard(run_group(self.run_id), self.channel_name)

    async def journal_entry(self, event):
        """One handler for the one event type: skip what this client already has, and send what
        it lacks before this entry first."""
        if self.access_gone:
            return
        run_id, sequence = event["runId"], event["entry"]["sequence"]
        last = self.last_sent.get(run_id, 0)
        if sequence <= last:
            return
        if sequence > last + 1 and not self.html:
            # A run's entries are written by more than one process (a decision's, a worker's),
            # each sending its events once it has committed: one may send late, or die between
            # its commit and its send. What it wrote is in the journal already.
            for missing in await self._entries_between(run_id, last, sequence):
                await self.send_json(missing)
        self.last_sent[run_id] = sequence
        if self.html:
            if not event.get("replayed"):
                await self.send(text_data=REFRESH_RUN.format(url=f"/console/runs/{self.run_id}/live/"))
            return
        await self.send_json(event)

    @database_sync_to_async
    def _run_for_user(self) -> Run | int:
        """The run the path names, if the caller may see it; else the code to close with."""
        self.identity = socket_identity(self.scope)
        if code := refusal_at_connect(self.identity):
            return code
        try:
            self.run_id = UUID(self.scope["url_route"]["kwargs"]["run_id"])
        except ValueError:
            return NOT_FOUND
        run = one_or_none(Run.objects.filter(pk=self.run_id, tenant_id=self.identity.tenant_id))
        return NOT_FOUND if run is None else run

    @database_sync_to_async
    def _entries_between(self, run_id: str, after: int, before: int) -> list[dict]:
        """The events of the entries of this run (or of a child of it) ``run_id`` strictly
        between ``after`` and ``before``."""
        run = one_or_none(Run.objects.filter(pk=run_id).filter(Q(pk=self.run_id) | Q(parent_id=self.run_id)))
        if run is None:
            return []
        entries = run.journal.filter(sequence__gt=after, sequence__lt=before).order_by("sequence")
        return [entry_event(run, entry) for entry in entries]

    @database_sync_to_async
    def _history(self, after: int) -> tuple[list[dict], str]:
        run = Run.objects.get(pk=self.run_id)
        children = list(Run.objects.filter(parent=run))
        events = [
            entry_event(run, entry) for entry in run.journal.filter(sequence__gt=after).order_by("sequence")
        ]
        for child in children:  # a child's entries are all new to a client that starts here
            events += [entry_event(child, entry) for entry in child.journal.order_by("sequence")]
        return sorted(events, key=lambda event: event["entry"]["time"]), run.status
