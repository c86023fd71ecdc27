"""Two web processes and two workers on PostgreSQL and Redis, with 50 gated runs at once.

Runs start through one web process, workers execute them to their approval, a reviewer
decides them all through the other web process, workers resume them; a WebSocket client
of the first web process sees every run complete. Each tool call happens once, counted by
its own side effect (a line in a file) and by the workers' metrics.
"""

import json
import os
import subprocess
import sys
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest
from django.db import connection
from prometheus_client.parser import text_string_to_metric_families
from websockets.sync.client import connect

from approvals.models import Approval
from runs.models import Run, RunStatus
from tenants.tokens import do_create_token
from tests.factories import reviewer
from tests.live_server import ROOT, LiveServer, database_env, free_port

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
RUNS = 50
METRICS_TOKEN = "a-metrics-token-for-the-scale-test"


def start_worker(environment: dict[str, str], log: Path, metrics_port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "run_worker",
            "--no-reload",
            "--no-startup-delay",
            "--interval",
            "0.05",
            "--metrics-port",
            str(metrics_port),
            "--metrics-host",
            "127.0.0.1",
        ],
        cwd=ROOT,
        env=os.environ | environment,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )


def wait_for(condition, *, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def samples(text: str) -> dict[tuple[str, tuple], float]:
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_fifty_gated_runs_across_two_web_processes_and_two_workers(redis_server, tmp_path):
    ada = reviewer("ada", role="admin")
    headers = {"Authorization": f"Bearer {do_create_token(user=ada)[1]}"}
    tallies = tmp_path / "tallies.txt"
    environment = database_env(connection) | {
        "REDIS_URL": "redis://127.0.0.1:6379/4",
        "KINDGI_TASKS": "db",
        "KINDGI_PACKS": "packs.my_pack,packs.acme_ops,tests.pack_fixtures.probes",
    }
    multiprocess_metrics = tmp_path / "metrics"
    multiprocess_metrics.mkdir()
    worker_environment = environment | {
        "KINDGI_LOG_FORMAT": "json",
        "PROMETHEUS_MULTIPROC_DIR": str(multiprocess_metrics),
    }
    worker_logs = [tmp_path / "worker-1.log", tmp_path / "worker-2.log"]
    metrics_ports = [free_port(), free_port()]
    workers = [
        start_worker(worker_environment, log, port)
        for log, port in zip(worker_logs, metrics_ports, strict=True)
    ]
    try:
        with (
            ExitStack() as open_sockets,
            LiveServer(environment | {"KINDGI_METRICS_TOKEN": METRICS_TOKEN}) as first,
            LiveServer(environment) as second,
            httpx.Client(headers=headers, timeout=30) as http,
        ):
            run_ids = []
            for _ in range(RUNS):
                started = http.post(
                    f"{first.url}/api/v1/runs",
                    json={"agentId": "probe.tallier", "input": {"userMessage": str(tallies)}},
                )
                assert started.status_code == 201, started.text
                run_ids.append(started.json()["id"])
            sockets = []
            for run_id in run_ids:
                socket_url = first.url.replace("http://", "ws://") + f"/ws/runs/{run_id}/"
                socket = open_sockets.enter_context(
                    connect(socket_url, additional_headers=headers, origin=first.url, open_timeout=10)
                )
                sockets.append(socket)
                while json.loads(socket.recv(timeout=10))["type"] != "replay.done":
                    pass

            wait_for(
                lambda: Run.objects.filter(pk__in=run_ids, status=RunStatus.SUSPENDED).count() == RUNS,
                seconds=120,
                what="the workers to take every run to its approval",
            )
            assert not tallies.exists()  # nothing ran before its approval
            for approval in Approval.objects.filter(run_id__in=run_ids):
                decided = http.post(
                    f"{second.url}/api/v1/approvals/{approval.pk}/complete", json={"decision": "approve"}
                )
                assert decided.status_code == 200, decided.text

            completed_seen = set()
            for run_id, socket in zip(run_ids, sockets, strict=True):
                while True:
                    event = json.loads(socket.recv(timeout=60))
                    if event["entry"]["kind"] == "run.completed":
                        completed_seen.add(run_id)
                        break
            assert completed_seen == set(run_ids)

            statuses = set(Run.objects.filter(pk__in=run_ids).values_list("status", flat=True))
            assert statuses == {RunStatus.COMPLETED}
            # Each tool call ran exactly once, by its own count.
            assert sorted(tallies.read_text().splitlines()) == sorted(run_ids)

            site = samples(
                http.get(f"{first.url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).text
            )
            tallier = (("agent", "probe.tallier"), ("flow", "agent.turn"))
            assert site[("kindgi_runs_completed_total", tallier)] == RUNS
            assert site[("kindgi_approval_time_to_decision_seconds_count", (("outcome", "approve"),))] == RUNS
            # The workers share a metrics directory: either one reports both workers' calls.
            calls = (
                "kindgi_tool_call_duration_seconds_count",
                (("outcome", "completed"), ("tool", "probe.tally")),
            )
            for port in metrics_ports:
                assert samples(httpx.get(f"http://127.0.0.1:{port}/metrics").text)[calls] == RUNS
    finally:
        for worker in workers:
            worker.terminate()
            worker.wait(timeout=30)

    # Both workers did some of the work, and every line they logged about a run names it.
    logged = [[json.loads(line) for line in log.read_text().splitlines()] for log in worker_logs]
    lines = [line for worker_lines in logged for line in worker_lines]
    executing = [line for line in lines if line["message"].endswith("executing agent probe.tallier@1.0.0")]
    assert all(any(line in executing for line in worker_lines) for worker_lines in logged)
    assert len(executing) == 2 * RUNS  # to the approval, then after it
    for line in lines:
        mentioned = [run_id for run_id in run_ids if run_id in line["message"]]
        if mentioned:
            assert line.get("run_id") == mentioned[0], line
    assert {line["run_id"] for line in executing} == set(run_ids)
