"""Schedules: a due tick starts exactly one run that no person started, a missed tick runs once,
and two sweeping processes (PostgreSQL) never start a tick twice."""

import json
import os
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from runs.exceptions import ScheduleInputError
from runs.models import Run, RunStatus, Schedule, Trigger
from runs.schedules import check_save_schedule, start_due_schedules
from tests.api.conftest import client_for
from tests.factories import default_tenant, member, other_tenant
from tests.live_server import ROOT, database_env
from tests.runs.test_sweeper import the_sweeper_goes_round

pytestmark = pytest.mark.django_db(transaction=True)


def check_order_schedule(owner=None, **fields) -> Schedule:
    owner = owner or member("ada")
    return check_save_schedule(
        tenant=default_tenant(),
        fields={
            "name": "order 1001 every five minutes",
            "flow_key": "my-pack.check-order",
            "input": {"orderId": "ord_1001"},
            "cron": "*/5 * * * *",
            "owner": owner.get_username(),
        }
        | fields,
        acting_user=None,
        surface="system",
    )


def due(schedule: Schedule, *, ago: timedelta) -> datetime:
    """Make ``schedule``'s next tick ``ago`` in the past; now."""
    now = timezone.now()
    Schedule.objects.filter(pk=schedule.pk).update(next_run_at=now - ago)
    return now


class TestTicks:
    def test_a_due_tick_starts_one_run_that_no_person_started(self):
        schedule = check_order_schedule()
        assert schedule.next_run_at > timezone.now()
        assert start_due_schedules().done == []  # not due yet
        now = due(schedule, ago=timedelta(seconds=1))

        started = start_due_schedules(now=now)

        assert len(started.done) == 1
        run = Run.objects.get()
        assert run.pk == started.done[0]
        assert (run.trigger, run.started_by, run.service) == (Trigger.SCHEDULE, None, None)
        assert run.status == RunStatus.COMPLETED
        assert run.output["orderId"] == "ord_1001"
        schedule.refresh_from_db()
        assert schedule.last_run_id == run.pk
        assert schedule.last_run_at == now
        assert schedule.next_run_at > now
        assert schedule.next_run_at.minute % 5 == 0
        assert start_due_schedules(now=now).done == []  # the tick is spent

    def test_missed_ticks_run_once_not_many_times(self):
        schedule = check_order_schedule()
        now = due(schedule, ago=timedelta(hours=6))  # 72 ticks missed while nothing swept
        assert len(start_due_schedules(now=now).done) == 1
        assert start_due_schedules(now=now + timedelta(seconds=1)).done == []
        assert Run.objects.count() == 1
        schedule.refresh_from_db()
        assert now < schedule.next_run_at <= now + timedelta(minutes=5)

    def test_a_disabled_schedule_does_not_run_and_missed_ticks_stay_missed_when_it_is_turned_on(self):
        schedule = check_order_schedule()
        check_save_schedule(
            tenant=default_tenant(),
            fields={"enabled": False},
            schedule=schedule,
            acting_user=None,
            surface="system",
        )
        now = due(schedule, ago=timedelta(hours=1))
        assert start_due_schedules(now=now).done == []
        schedule = check_save_schedule(
            tenant=default_tenant(),
            fields={"enabled": True},
            schedule=Schedule.objects.get(),
            acting_user=None,
            surface="system",
        )
        assert schedule.next_run_at > timezone.now()
        assert start_due_schedules().done == []
        assert not Run.objects.exists()

    def test_a_tick_whose_run_cannot_start_is_recorded_on_the_schedule(self):
        schedule = check_order_schedule()
        ada = schedule.owner
        ada.is_active = False  # the owner left: whose connection would it use?
        ada.save()
        now = due(schedule, ago=timedelta(seconds=1))
        swept = start_due_schedules(now=now)
        assert swept.done == []
        stands_on_nobody = "ada (on whose behalf this schedule run would run) is not an active person"
        assert stands_on_nobody in swept.left[0]
        schedule.refresh_from_db()
        assert stands_on_nobody in schedule.last_error
        assert schedule.next_run_at > now  # spent, not retried every round
        assert not Run.objects.exists()

    def test_the_cron_is_utc_and_a_changed_cron_counts_its_next_tick_again(self):
        schedule = check_order_schedule(cron="0 9 * * 1-5")
        tick = schedule.next_run_at.astimezone(UTC)
        assert (tick.hour, tick.minute) == (9, 0)
        assert tick.weekday() < 5
        schedule = check_save_schedule(
            tenant=default_tenant(),
            fields={"cron": "30 3 * * *"},
            schedule=schedule,
            acting_user=None,
            surface="system",
        )
        tick = schedule.next_run_at.astimezone(UTC)
        assert (tick.hour, tick.minute) == (3, 30)


class TestConcurrentSweepers:
    @pytest.mark.postgres
    def test_threads_sweeping_at_once_start_a_tick_once(self):
        """Without the sweep lease (cron running run_sweeps twice, say), the claim alone holds."""
        assert connection.vendor == "postgresql"
        schedule = check_order_schedule()
        now = due(schedule, ago=timedelta(seconds=1))
        barrier = threading.Barrier(6)
        started: list = []

        def sweep():
            try:
                barrier.wait()
                started.extend(start_due_schedules(now=now).done)
            finally:
                connections.close_all()

        threads = [threading.Thread(target=sweep) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert len(started) == 1
        assert Run.objects.count() == 1

    @pytest.mark.postgres
    def test_two_sweeping_processes_start_each_tick_once(self):
        assert connection.vendor == "postgresql"
        ada = member("ada")
        # Once a year: every five minutes, a slow machine's sweepers could reach the next tick
        # before the test ends, and rightly start each schedule again (10 runs, not 5).
        schedules = [check_order_schedule(ada, name=f"order check {n}", cron="0 0 1 1 *") for n in range(5)]
        Schedule.objects.update(next_run_at=timezone.now() - timedelta(seconds=1))
        env = os.environ | database_env(connection) | {"KINDGI_PACKS": "packs.my_pack,packs.acme_ops"}
        processes = [
            subprocess.Popen(
                [sys.executable, "manage.py", "run_sweeps", "--every", "0.05"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            deadline = time.monotonic() + 60
            while Run.objects.filter(status=RunStatus.COMPLETED).count() < 5 and time.monotonic() < deadline:
                time.sleep(0.2)
            with the_sweeper_goes_round():
                time.sleep(1)  # rounds after the last: nothing more is started
        finally:
            for process in processes:
                process.terminate()
        started = []
        for process in processes:
            out, _ = process.communicate(timeout=30)
            started += [
                item
                for line in out.splitlines()
                for item in json.loads(line).get("start schedules", {})["done"]
            ]
        assert len(started) == 5
        assert sorted(started) == sorted(str(run.pk) for run in Run.objects.all())
        assert {run.trigger for run in Run.objects.all()} == {Trigger.SCHEDULE}
        assert sorted(Schedule.objects.values_list("last_run_id", flat=True)) == sorted(
            run.pk for run in Run.objects.all()
        )
        assert len(schedules) == 5


class TestWriting:
    def test_bad_schedules_are_refused_naming_each_field_and_nothing_is_saved(self):
        member("ada")
        service = member("nightly")
        service.membership.is_service_account = True
        service.membership.save()
        cases = [
            ({"cron": "every day"}, "/cron: 'every day' has 2 fields, not 5"),
            ({"cron": "61 * * * *"}, "/cron: '61 * * * *' is not a cron expression"),
            ({"cron": "* * * * * *"}, "has 6 fields, not 5"),
            ({"flow_key": "my-pack.nope"}, "/flowId: there is no flow 'my-pack.nope'"),
            ({"agent_key": "my-pack.echo-agent"}, "/agentId: give exactly one of agentId and flowId"),
            ({"input": {"orderId": ""}}, "/input/orderId:"),
            ({"input": {"orderId": "ord_1", "dryRun": True}}, "/input/dryRun:"),
            ({"owner": "nobody"}, "/owner: a person of this tenant is required"),
            ({"owner": "nightly"}, "/owner: nightly is a service account"),
            ({"name": " "}, "/name: a name is required"),
            ({"colour": "red"}, "/colour: not a field of a schedule"),
        ]
        for fields, message in cases:
            with pytest.raises(ScheduleInputError) as refused:
                check_save_schedule(
                    tenant=default_tenant(),
                    fields={
                        "name": "checks",
                        "flow_key": "my-pack.check-order",
                        "input": {"orderId": "ord_1001"},
                        "cron": "*/5 * * * *",
                        "owner": "ada",
                    }
                    | fields,
                    acting_user=None,
                    surface="system",
                )
            assert message in str(refused.value), (fields, str(refused.value))
        assert not Schedule.objects.exists()

    def test_the_api_makes_lists_changes_and_deletes_a_members_own_schedules(self):
        ada = member("ada")
        api = client_for(ada)
        made = api.post(
            "/api/v1/schedules",
            {
                "name": "morning check",
                "flowId": "my-pack.check-order",
                "input": {"orderId": "ord_1001"},
                "cron": "0 9 * * 1-5",
            },
            format="json",
        )
        assert made.status_code == 201, made.content
        body = made.json()
        assert (body["owner"], body["enabled"], body["lastRunId"], body["agentId"]) == ("ada", True, None, "")
        assert body["nextRunAt"].endswith(("09:00:00Z", "09:00:00+00:00"))
        listed = api.get("/api/v1/schedules").json()
        assert [item["name"] for item in listed["items"]] == ["morning check"]

        changed = api.patch(f"/api/v1/schedules/{body['id']}", {"cron": "0 10 * * *"}, format="json")
        assert changed.status_code == 200
        assert changed.json()["nextRunAt"] != body["nextRunAt"]

        unknown = api.patch(f"/api/v1/schedules/{body['id']}", {"crom": "0 10 * * *"}, format="json")
        assert unknown.status_code == 400
        assert "crom" in unknown.json()["error"]["message"] + json.dumps(unknown.json()["error"]["details"])
        bad = api.patch(f"/api/v1/schedules/{body['id']}", {"cron": "nonsense"}, format="json")
        assert bad.status_code == 400
        assert "/cron:" in json.dumps(bad.json())
        assert Schedule.objects.get().cron == "0 10 * * *"

        assert api.delete(f"/api/v1/schedules/{body['id']}").status_code == 204
        assert not Schedule.objects.exists()

    def test_a_schedule_is_its_owners_and_its_tenant_admins(self):
        ada, bob = member("ada"), member("bob")
        boss = member("boss", tenant_admin=True)
        outsider = member("eve", tenant=other_tenant(), tenant_admin=True)
        schedule = check_order_schedule(owner=ada)
        mine = {
            "name": "bob's",
            "flowId": "my-pack.check-order",
            "input": {"orderId": "ord_1001"},
            "cron": "0 9 * * *",
        }
        # Bob sees none of Ada's, and may not make one for her.
        assert client_for(bob).get("/api/v1/schedules").json()["items"] == []
        assert client_for(bob).get(f"/api/v1/schedules/{schedule.pk}").status_code == 404
        assert client_for(bob).delete(f"/api/v1/schedules/{schedule.pk}").status_code == 404
        refused = client_for(bob).post("/api/v1/schedules", mine | {"owner": "ada"}, format="json")
        assert refused.status_code == 403
        # Nor may Ada hand hers to Bob.
        handed = client_for(ada).patch(f"/api/v1/schedules/{schedule.pk}", {"owner": "bob"}, format="json")
        assert handed.status_code == 403
        # Another tenant's admin knows nothing of it.
        assert client_for(outsider).get(f"/api/v1/schedules/{schedule.pk}").status_code == 404
        # The tenant admin sees it, and may make one for Bob.
        assert [s["name"] for s in client_for(boss).get("/api/v1/schedules").json()["items"]] == [
            schedule.name
        ]
        made = client_for(boss).post("/api/v1/schedules", mine | {"owner": "bob"}, format="json")
        assert made.status_code == 201, made.content
        assert made.json()["owner"] == "bob"
        assert Schedule.objects.get(name="bob's").owner == bob
        assert Schedule.objects.get(pk=schedule.pk).owner == ada

    def test_the_admin_checks_a_schedule_as_the_api_does(self, admin_client):
        member("ada")
        url = "/admin/runs/schedule/add/"
        form = {
            "tenant": default_tenant().pk,
            "name": "nightly",
            "agent_key": "",
            "flow_key": "my-pack.check-order",
            "input": '{"orderId": "ord_1001"}',
            "cron": "0 2 * * *",
            "owner": member("ops").pk,
            "enabled": "on",
        }
        refused = admin_client.post(url, form | {"cron": "2am"})
        assert refused.status_code == 200
        assert "/cron: &#x27;2am&#x27; has 1 fields, not 5" in refused.text
        assert not Schedule.objects.exists()
        saved = admin_client.post(url, form)
        assert saved.status_code == 302, saved.text[:2000]
        schedule = Schedule.objects.get()
        assert schedule.next_run_at is not None
        tick = schedule.next_run_at.astimezone(UTC)
        assert (tick.hour, tick.minute) == (2, 0)
