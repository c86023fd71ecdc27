"""The run WebSocket: who may connect, replay then live, each entry once, published after commit."""

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator

from kindgi_site.asgi import application
from runs.actions import check_start_run
from tenants.tokens import do_create_token
from tests.factories import default_tenant, member, other_tenant, principal, reviewer
from tests.runs.decide import decide

pytestmark = pytest.mark.django_db(transaction=True)


def communicator(run_id, *, token=None, after=0):
    headers = [(b"origin", b"http://127.0.0.1")]
    if token:
        headers.append((b"authorization", f"Bearer {token}".encode()))
    return WebsocketCommunicator(application, f"/ws/runs/{run_id}/?after={after}", headers=headers)


async def replayed(socket):
    events = []
    while True:
        event = await socket.receive_json_from(timeout=5)
        if event["type"] == "replay.done":
            return events, event
        events.append(event)


def token_of(user) -> str:
    return do_create_token(user=user)[1]


def start_flow():
    return check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="acme-ops.status-flow",
        input={"userMessage": "Up."},
    )


def test_the_history_then_the_live_entries_each_once():
    flow = start_flow()
    token = token_of(member("ada"))

    async def scenario():
        socket = communicator(flow.pk, token=token)
        connected, _ = await socket.connect()
        assert connected
        history, done = await replayed(socket)
        own = [(e["entry"]["sequence"], e["entry"]["kind"]) for e in history if e["runId"] == str(flow.pk)]
        assert own == [(1, "run.started"), (2, "node.started"), (3, "wait.suspended")]
        assert all(e["replayed"] for e in history)
        assert any(e["runId"] != str(flow.pk) for e in history)  # the agent step's child run
        assert done == {"type": "replay.done", "runId": str(flow.pk), "runStatus": "suspended"}

        await sync_to_async(lambda: decide(flow.children.get(), "call_post_update"))()
        live = []
        while not live or live[-1]["entry"]["kind"] != "run.completed" or live[-1]["runId"] != str(flow.pk):
            live.append(await socket.receive_json_from(timeout=5))
        own_live = [e["entry"]["sequence"] for e in live if e["runId"] == str(flow.pk)]
        assert own_live == [4, 5, 6]
        assert live[-1]["runStatus"] == "completed"
        assert not any(e.get("replayed") for e in live)
        await socket.disconnect()

    async_to_sync(scenario)()


def test_a_reconnecting_client_gets_only_what_it_missed():
    flow = start_flow()
    token = token_of(member("ada"))

    async def scenario():
        socket = communicator(flow.pk, token=token, after=2)
        await socket.connect()
        history, _ = await replayed(socket)
        assert [e["entry"]["sequence"] for e in history if e["runId"] == str(flow.pk)] == [3]
        await socket.disconnect()

    async_to_sync(scenario)()


def test_a_session_user_may_connect():
    from channels.testing import WebsocketCommunicator as Socket
    from django.contrib.sessions.backends.db import SessionStore

    flow = start_flow()
    ada = member("ada")
    session = SessionStore()
    session["_auth_user_id"] = str(ada.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = ada.get_session_auth_hash()
    session.save()

    async def scenario():
        socket = Socket(
            application,
            f"/ws/runs/{flow.pk}/",
            headers=[
                (b"origin", b"http://127.0.0.1"),
                (b"cookie", f"sessionid={session.session_key}".encode()),
            ],
        )
        connected, _ = await socket.connect()
        assert connected
        await socket.disconnect()

    async_to_sync(scenario)()


@pytest.mark.parametrize(
    ("who", "code"),
    [("anonymous", 4401), ("wrong token", 4401), ("other tenant", 4404), ("no tenant", 4403)],
)
def test_who_may_not_see_the_run_is_told_why_at_connect_with_a_close_code(who, code):
    """Accepted, then closed at once with the code docs/api.md promises (a refused handshake is
    a bare HTTP 403 to a client); another tenant's run is "nothing here", as for a run that
    does not exist."""
    from django.contrib.auth import get_user_model

    flow = start_flow()
    token = {
        "anonymous": None,
        "wrong token": "kgi_deadbeef_nope",
        "other tenant": token_of(reviewer("eve", role="admin", tenant=other_tenant())),
        "no tenant": token_of(get_user_model().objects.create_user(username="loner")),
    }[who]

    async def scenario():
        socket = communicator(flow.pk, token=token)
        connected, _ = await socket.connect()
        assert connected
        assert await socket.receive_output(timeout=5) == {"type": "websocket.close", "code": code}

    async_to_sync(scenario)()


def test_a_browser_from_another_site_is_refused():
    flow = start_flow()
    token = token_of(member("ada"))

    async def scenario():
        socket = WebsocketCommunicator(
            application,
            f"/ws/runs/{flow.pk}/",
            headers=[(b"origin", b"https://evil.example"), (b"authorization", f"Bearer {token}".encode())],
        )
        connected, _ = await socket.connect()
        assert not connected

    async_to_sync(scenario)()


def test_entries_are_published_only_after_their_transaction_commits():
    from unittest import mock

    from django.db import transaction

    from runs.engine.entries import Entry
    from runs.journal import append_entries
    from runs.models import Run

    flow = start_flow()
    with mock.patch("core.channels.send_to_groups") as send:
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=flow.pk)
            append_entries(run, [Entry(kind="tool.completed", payload={"callId": "x"})])
            run.save()
            assert send.call_count == 0  # written, not yet committed: not yet told
        assert send.call_count == 1
        groups, make_events = send.call_args.args
        assert groups == [f"run.{flow.pk}"]
        [event] = make_events()
        assert (event["entry"]["sequence"], event["entry"]["kind"]) == (4, "tool.completed")

        def append_then_fail():
            with transaction.atomic():
                run = Run.objects.select_for_update().get(pk=flow.pk)
                append_entries(run, [Entry(kind="tool.completed", payload={"callId": "y"})])
                raise RuntimeError("rolled back")

        with pytest.raises(RuntimeError):
            append_then_fail()
        assert send.call_count == 1  # a rolled-back entry is never announced


def test_an_entry_whose_event_never_came_is_sent_before_the_next_in_order():
    """Entries of one run are written by several processes (the decision's, the worker's), each
    publishing after its commit: one may die between its commit and its send, or send late. The
    socket still gets every entry once, in order: a gap is read from the journal."""
    from channels.layers import get_channel_layer

    from runs.engine.entries import Entry
    from runs.events import entry_event, run_group
    from runs.journal import append_entries
    from runs.models import Run

    flow = start_flow()
    token = token_of(member("ada"))

    def write_two_publish_the_second():
        from django.db import transaction

        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=flow.pk)
            first, second = append_entries(
                run,
                [
                    Entry(kind="tool.completed", payload={"callId": "x"}),
                    Entry(kind="tool.completed", payload={"callId": "y"}),
                ],
            )
            run.save()
        return first, second, run

    async def scenario():
        socket = communicator(flow.pk, token=token)
        await socket.connect()
        history, _ = await replayed(socket)
        assert max(e["entry"]["sequence"] for e in history if e["runId"] == str(flow.pk)) == 3
        from unittest import mock

        with mock.patch("core.channels.send_to_groups"):  # the writer dies before it sends
            first, second, run = await sync_to_async(write_two_publish_the_second)()
        layer = get_channel_layer()
        await layer.group_send(run_group(flow.pk), entry_event(run, second))  # only the second
        await layer.group_send(run_group(flow.pk), entry_event(run, first))  # the first, late
        received = [await socket.receive_json_from(timeout=5) for _ in range(2)]
        assert [e["entry"]["sequence"] for e in received] == [first.sequence, second.sequence] == [4, 5]
        assert received[0]["entry"]["payload"] == {"callId": "x"}
        assert await socket.receive_nothing(timeout=0.5)  # the late one is not sent again
        await socket.disconnect()

    async_to_sync(scenario)()
