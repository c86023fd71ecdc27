"""Live events are best effort: a channel layer that fails costs a log line, not the change."""

from unittest import mock

import pytest

from approvals.actions.decisions import check_complete_approval
from approvals.models import ApprovalStatus
from runs.actions import check_start_run
from runs.models import RunStatus
from tests.factories import default_tenant, principal, reviewer

pytestmark = pytest.mark.django_db(transaction=True)


class DownLayer:
    """A channel layer whose server does not answer (Redis restarting)."""

    async def group_send(self, group, event):
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


def test_a_decision_stands_and_its_run_goes_on_when_the_layer_is_down(caplog):
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )
    with mock.patch("core.channels.get_channel_layer", return_value=DownLayer()):
        completion = check_complete_approval(
            approval_id=run.approvals.get().pk, acting_user=reviewer("ada"), decision="approve"
        )
    run.refresh_from_db()
    assert completion.approval.status == ApprovalStatus.APPROVED
    assert run.status == RunStatus.COMPLETED
    assert "live events to" in caplog.text
    assert "ConnectionError" in caplog.text
