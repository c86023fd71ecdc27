"""A schedule's runs are started by no person: a read through the owner's connection waits for
the owner's yes, which only they give."""

from datetime import timedelta

import pytest
from django.utils import timezone

from approvals.actions.decisions import check_complete_approval
from approvals.exceptions import DecisionForbiddenError
from approvals.models import Approval
from runs.models import Run, RunStatus, Schedule, Trigger
from runs.schedules import check_save_schedule, start_due_schedules
from tests.connections.test_connecting import connect
from tests.factories import default_tenant, member, reviewer
from tests.pack_fixtures.probes import SCRIPT
from tests.runs.helpers import answer, calls

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("probe_packs")]


def test_a_scheduled_read_through_the_owners_connection_waits_for_the_owners_yes(tracker, oauth_server):
    ada = member("ada")
    connect(ada, oauth_server)
    boss = reviewer("boss", role="admin")
    schedule = check_save_schedule(
        tenant=default_tenant(),
        fields={
            "name": "who am I, hourly",
            "agent_key": "conn-probe.assistant",
            "input": {"userMessage": "who am I?"},
            "cron": "0 * * * *",
            "owner": "ada",
        },
        acting_user=None,
        surface="system",
    )
    Schedule.objects.filter(pk=schedule.pk).update(next_run_at=timezone.now() - timedelta(seconds=1))
    SCRIPT.replies[:] = [calls(("c1", "conn-probe.who-am-i", {})), answer("you are ada")]

    assert len(start_due_schedules().done) == 1

    run = Run.objects.get()
    assert (run.trigger, run.started_by) == (Trigger.SCHEDULE, None)
    assert run.connection_owners["tracker"]["username"] == "ada"
    assert run.status == RunStatus.SUSPENDED
    assert not run.journal.filter(kind="tool.called").exists()  # read-only, and still it waits
    approval = Approval.objects.get(run=run)
    assert approval.subject_kind == "connection:use"
    assert approval.title == "Use of ada's tracker connection: conn-probe.who-am-i"
    with pytest.raises(DecisionForbiddenError, match="only ada may decide this"):
        check_complete_approval(approval_id=approval.pk, acting_user=boss, decision="approve")

    check_complete_approval(approval_id=approval.pk, acting_user=ada, decision="approve")
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert [m["content"] for m in run.messages if m.get("role") == "tool"] == [
        {"user": "ada@test-app", "via": "ada"}
    ]
