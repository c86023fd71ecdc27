"""The django-tasks-db backend: runs queue in the database and a real `db_worker` process runs them."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from asgiref.local import Local
from django.db import connection
from django.tasks import task_backends
from django.test.utils import CaptureQueriesContext

from runs.actions import check_start_run
from runs.models import RunStatus
from runs.tasks import execute_run
from tests.api.conftest import client_for
from tests.factories import default_tenant, principal, reviewer
from tests.live_server import database_env

from .decide import decide
from .helpers import start

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.django_db(transaction=True)


def _reset_task_backends() -> None:
    task_backends.__dict__.pop("settings", None)
    task_backends._settings = None
    task_backends._connections = Local(False)


@pytest.fixture
def database_queue(settings):
    settings.TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
    _reset_task_backends()
    yield
    settings.TASKS = {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}
    _reset_task_backends()


def run_worker() -> subprocess.CompletedProcess:
    """One worker process that executes every queued task, then exits."""
    env = (
        os.environ
        | database_env(connection)
        | {"KINDGI_TASKS": "db", "KINDGI_PACKS": "packs.my_pack,packs.acme_ops"}
    )
    result = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "db_worker",
            "--batch",
            "--no-reload",
            "--no-startup-delay",
            "--interval",
            "0.1",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return result


def test_a_queued_flow_run_is_executed_by_a_worker(database_queue):
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.check-order",
        input={"orderId": "ord_1001"},
    )
    assert run.status == RunStatus.QUEUED
    assert run.journal.count() == 0
    run_worker()
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert run.output == {"status": "shipped", "orderId": "ord_1001", "totalCents": 4200}


def test_suspend_resume_and_redelivery_through_the_queue(database_queue):
    run = start("acme-ops.status-agent", "Checkout is back to normal.")
    assert run.status == RunStatus.QUEUED
    run_worker()
    run.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED

    run = decide(run, "call_post_update")
    assert run.status == RunStatus.QUEUED  # the decision only queued the resume
    execute_run.enqueue(str(run.pk))  # and the same task delivered twice
    run_worker()
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert run.output == {"reply": "Posted to the status page: Checkout is back to normal."}
    assert run.journal.filter(kind="tool.completed").count() == 1
    assert run.journal.filter(kind="run.completed").count() == 1


def test_the_database_queue_takes_the_task_inside_the_changes_transaction(database_queue):
    from django.db import transaction
    from django_tasks_db.models import DBTaskResult

    from runs import dispatch
    from runs.models import Run
    from tests.factories import default_tenant

    run = Run(tenant=default_tenant(), flow_key="my-pack.check-order", flow_version="0.1.0")
    queued_inside = []

    def change_that_fails():
        with transaction.atomic():
            dispatch.start(run, then=print)
            queued_inside.append(DBTaskResult.objects.count())
            raise RuntimeError("the change fails")

    with pytest.raises(RuntimeError):
        change_that_fails()
    assert queued_inside == [1]  # queued already, in the change's transaction
    assert DBTaskResult.objects.count() == 0  # and rolled back with it
    assert not Run.objects.filter(pk=run.pk).exists()


def test_a_decided_run_is_taken_from_the_queue_before_runs_not_started_yet(database_queue):
    from django.db import transaction
    from django_tasks_db.models import DBTaskResult

    waiting = start("acme-ops.status-agent", "Waiting on a person.")
    run_worker()
    waiting.refresh_from_db()
    assert waiting.status == RunStatus.SUSPENDED
    new = [start("acme-ops.status-agent", f"New {n}.") for n in range(3)]
    decide(waiting, "call_post_update")
    with transaction.atomic():
        taken_first = DBTaskResult.objects.ready().get_locked()  # the one a worker takes next
    assert taken_first.args_kwargs["args"] == [str(waiting.pk)]
    queued = {tuple(task.args_kwargs["args"]) for task in DBTaskResult.objects.ready()}
    assert queued == {(str(run.pk),) for run in [waiting, *new]}


@pytest.fixture
def ada_api():
    return client_for(reviewer("ada"))


def test_a_run_started_through_the_api_for_a_worker_is_answered_as_written(database_queue, ada_api):
    """The 201 says what was committed (queued, by whom) without reading the run back: a web
    process under load starts many runs it will not execute."""
    body = {"agentId": "acme-ops.status-agent", "input": {"userMessage": "All systems go."}}
    with CaptureQueriesContext(connection) as captured:
        response = ada_api.post("/api/v1/runs", body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "queued"
    assert response.json()["startedBy"] == "ada"
    sql = [query["sql"] for query in captured.captured_queries]
    read_back = [
        statement for statement in sql if 'FROM "runs_run"' in statement or 'FROM "auth_user"' in statement
    ]
    assert read_back == [], read_back
