"""Live events are best effort: a channel layer that fails costs a log line, not the change; and
a server's layer is sent to in order, without the sender waiting for it."""

import asyncio
import threading
from unittest import mock

import pytest

from approvals.actions import check_complete_approval
from approvals.models import ApprovalStatus
from core import channels
from core.channels import flush_live_events, send_to_groups
from runs.actions import check_start_run
from runs.models import RunStatus
from tests.factories import default_tenant, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


class DownLayer:
    """A channel layer whose server does not answer (Redis restarting)."""

    async def group_send(self, group, event):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def test_a_decision_stands_and_its_run_goes_on_when_the_layer_is_down(caplog):
    run = check_start_run(
        tenant=default_tenant(), agent_id="acme-ops.status-agent", input={"userMessage": "Up."}
    )
    with mock.patch("core.channels.get_channel_layer", return_value=DownLayer()):
        completion = check_complete_approval(
            approval_id=run.approvals.get().pk, acting_user=reviewer("ada"), decision="approve"
        )
        assert flush_live_events(5)
    run.refresh_from_db()
    assert completion.approval.status == ApprovalStatus.APPROVED
    assert run.status == RunStatus.COMPLETED
    assert "live events to" in caplog.text
    assert "ConnectionError" in caplog.text


class HeldLayer:
    """A server's layer that answers only once it is let: what it was sent, in order."""

    def __init__(self):
        self.sent: list[tuple[str, int]] = []
        self.answering = threading.Event()

    async def group_send(self, group, event):
        await asyncio.to_thread(self.answering.wait, 5)
        self.sent.append((group, event["n"]))


def test_a_send_to_a_servers_layer_does_not_wait_for_it_and_keeps_its_order():
    layer = HeldLayer()
    with mock.patch("core.channels.get_channel_layer", return_value=layer):
        for n in range(3):
            send_to_groups(["run", "parent"], lambda n=n: [{"n": n}, {"n": n + 10}])
        assert layer.sent == []  # every call came back while the layer had answered nothing
        layer.answering.set()
        assert flush_live_events(5)
    expected = [(group, n) for first in range(3) for n in (first, first + 10) for group in ("run", "parent")]
    assert layer.sent == expected


def test_sends_past_what_may_wait_are_dropped_with_a_log_line(caplog, monkeypatch):
    layer = HeldLayer()
    monkeypatch.setattr(channels, "MOST_WAITING_SENDS", 2)
    with mock.patch("core.channels.get_channel_layer", return_value=layer):
        for n in range(3):
            send_to_groups(["run"], lambda n=n: [{"n": n}])
        layer.answering.set()
        assert flush_live_events(5)
    assert layer.sent == [("run", 0), ("run", 1)]
    assert "live events to run not sent: 2 sends wait already" in caplog.text
