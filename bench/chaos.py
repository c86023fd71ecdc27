"""`python -m bench.chaos` (`make chaos`): gated runs on PostgreSQL and Redis with faults injected.

A bounded run on loopback only, never part of `make test`. It starts a PostgreSQL cluster and a
Redis server of its own (in a temporary folder, on free ports, so that restarting them touches
nothing else), two web processes and two workers, drives gated runs of the chaos pack through
the API while reviewers decide them and WebSocket clients follow them, and meanwhile:

- SIGKILLs a worker in the middle of a tool call (and starts another);
- SIGKILLs a web process in the middle of a decision (and starts it again on its port);
- restarts PostgreSQL while a call runs;
- stops Redis and starts it again (decisions go on; live views catch up when they reconnect);
- delivers a run's task twice.

It then prints what happened, in figures, and writes them to bench/results/chaos-<date>.json.
It exits 1 if any approval was lost, any call ran twice, or any socket missed an event.
"""

import argparse
import base64
import contextlib
import datetime
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.servers import ROOT, daphne_command, free_port

POSTGRES_BIN = next(iter(sorted(Path("/usr/lib/postgresql").glob("*/bin"))), None)


def _as_postgres(command: list[str]) -> list[str]:
    """PostgreSQL refuses to run as root: as root, run it as the postgres user."""
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *command]
    return command


class Postgres:
    """A cluster of this run's own, in ``folder``, on a free port of 127.0.0.1."""

    def __init__(self, folder: Path):
        self.data = folder / "postgres"
        self.port = free_port()
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/kindgi"

    def _ctl(self, *arguments: str) -> None:
        subprocess.run(
            _as_postgres([str(POSTGRES_BIN / "pg_ctl"), "-D", str(self.data), "-w", "-t", "60", *arguments]),
            check=True,
            stdout=subprocess.DEVNULL,
        )

    def start(self) -> None:
        self.data.mkdir()
        if os.geteuid() == 0:
            shutil.chown(self.data, "postgres", "postgres")
        subprocess.run(
            _as_postgres(
                [str(POSTGRES_BIN / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres"]
            ),
            check=True,
            stdout=subprocess.DEVNULL,
        )
        options = (
            f"-p {self.port} -k {self.data} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        )
        self._ctl("-o", options, "-l", str(self.data / "log"), "start")
        subprocess.run(
            _as_postgres(
                [
                    str(POSTGRES_BIN / "createdb"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-U",
                    "postgres",
                    "kindgi",
                ]
            ),
            check=True,
        )

    def restart(self) -> None:
        self._ctl("-m", "fast", "restart")

    def stop(self) -> None:
        self._ctl("-m", "immediate", "stop")


class Redis:
    """A Redis server of this run's own on a free port, keeping nothing on disk."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            cwd=self.folder,
            stdout=subprocess.DEVNULL,
        )
        _wait_until(lambda: _answers(self.port), what="redis")

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()


def _answers(port: int) -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def _wait_until(condition, *, what: str, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} did not come up within {seconds} seconds")
        time.sleep(0.1)


class Process:
    """A web process or a worker, started again on demand (a web keeps its port)."""

    def __init__(self, command: list[str], env: dict[str, str], log: Path, port: int | None = None):
        self.command, self.env, self.log, self.port = command, env, log, port
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            self.command, cwd=ROOT, env=self.env, stdout=subprocess.DEVNULL, stderr=self.log.open("a")
        )
        if self.port is not None:
            _wait_until(lambda: _web_answers(self.port), what=f"the web process on {self.port}")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else None


def _web_answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def web(env: dict[str, str], log: Path) -> Process:
    port = free_port()
    return Process(daphne_command(port), env, log, port=port)


def worker(env: dict[str, str], log: Path) -> Process:
    command = [
        sys.executable,
        "manage.py",
        "run_worker",
        "--no-reload",
        "--no-startup-delay",
        "--interval",
        "0.05",
    ]
    return Process(command, env, log)


@dataclass
class Tally:
    """What the driver saw and did, from every thread (under ``lock``)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    started: list[str] = field(default_factory=list)
    faults: Counter = field(default_factory=Counter)
    decided: set[str] = field(default_factory=set)
    held_for_review: int = 0
    refused_twice: int = 0
    decisions_while_redis_was_down: int = 0
    redis_down: bool = False
    socket_reconnects: int = 0
    socket_missed: dict[str, list[int]] = field(default_factory=dict)
    errors: Counter = field(default_factory=Counter)

    def add(self, name: str, amount: int = 1) -> None:
        with self.lock:
            setattr(self, name, getattr(self, name) + amount)


class Chaos:
    def __init__(
        self,
        *,
        webs: list[Process],
        workers: list[Process],
        postgres: Postgres,
        redis: Redis,
        token: str,
        runs: int,
        ledger: Path,
    ):
        self.webs, self.workers, self.postgres, self.redis = webs, workers, postgres, redis
        self.headers = {"Authorization": f"Bearer {token}"}
        self.runs = runs
        self.ledger = ledger
        self.tally = Tally()
        self.stop = threading.Event()
        self.decisions_paused = threading.Event()
        self.web_lock = threading.Lock()

    # HTTP, to whichever web process answers

    def http(self, method: str, path: str, *, prefer: int | None = None, **options) -> httpx.Response:
        order = list(range(len(self.webs)))
        random.shuffle(order)
        if prefer is not None:
            order.remove(prefer)
            order.insert(0, prefer)
        last: Exception | None = None
        for _attempt in range(40):
            for index in order:
                try:
                    response = httpx.request(
                        method,
                        f"http://127.0.0.1:{self.webs[index].port}{path}",
                        headers=self.headers,
                        timeout=30,
                        **options,
                    )
                except httpx.HTTPError as error:
                    last = error
                    continue
                if response.status_code >= 500:  # the database restarting: ask again
                    last = RuntimeError(f"{response.status_code} from {path}")
                    continue
                return response
            time.sleep(0.25)
        raise RuntimeError(f"no web process answered {method} {path}: {last}")

    # The work

    def start_runs(self) -> None:
        from runs.tasks import execute_run

        for index in range(self.runs):
            if self.stop.is_set():
                return
            agent = "chaos.idempotent-writer" if index % 2 else "chaos.writer"
            response = self.http(
                "POST", "/api/v1/runs", json={"agentId": agent, "input": {"userMessage": f"note {index}"}}
            )
            if response.status_code != 201:
                self.tally.errors[f"start {response.status_code}"] += 1
                continue
            run_id = response.json()["id"]
            with self.tally.lock:
                self.tally.started.append(run_id)
            if index % 20 == 5:  # the same task delivered twice: the claim lets one through
                _with_database(lambda run_id=run_id: execute_run.enqueue(run_id))
                self.tally.faults["task delivered twice"] += 1
            time.sleep(0.02)

    def decide_forever(self) -> None:
        while not self.stop.is_set():
            if self.decisions_paused.is_set():
                time.sleep(0.05)
                continue
            try:
                pending = self.http(
                    "GET", "/api/v1/approvals", params={"status": "pending", "limit": 200}
                ).json()["items"]
            except RuntimeError:
                continue
            for approval in pending:
                if approval["id"] in self.tally.decided or self.stop.is_set():
                    continue
                self.decide(approval)
            time.sleep(0.1)

    def decide(self, approval: dict, *, via: int | None = None) -> None:
        interrupted = approval["subjectKind"] == "tool-call:interrupted"
        body = (
            {"decision": "reject", "rationale": "held for review in the chaos run"}
            if interrupted
            else {"decision": "approve", "rationale": "chaos"}
        )
        path = f"/api/v1/approvals/{approval['id']}/complete"
        copies = 2 if random.random() < 0.15 else 1  # a client that sends its decision twice
        for _ in range(copies):
            try:
                response = self.http("POST", path, json=body, prefer=via)
            except RuntimeError:
                self.tally.errors["decision unanswered"] += 1
                return
            self.count_decision(approval, response, interrupted)

    def count_decision(self, approval: dict, response: httpx.Response, interrupted: bool) -> None:
        if response.status_code == 200:
            with self.tally.lock:
                self.tally.decided.add(approval["id"])
                self.tally.held_for_review += int(interrupted)
                self.tally.decisions_while_redis_was_down += int(self.tally.redis_down)
        elif response.status_code == 409 and "already" in response.json()["error"]["message"]:
            with self.tally.lock:
                self.tally.decided.add(approval["id"])
                self.tally.refused_twice += 1
        else:
            self.tally.errors[f"decision {response.status_code}"] += 1

    def recover_forever(self) -> None:
        from runs.actions import recover_stuck_runs

        while not self.stop.is_set():
            _with_database(recover_stuck_runs)
            time.sleep(2)

    def keep_workers(self) -> None:
        """A worker that died (a fault took its database away) is replaced, as a supervisor would."""
        while not self.stop.is_set():
            for process in self.workers:
                if not process.alive():
                    process.start()
                    self.tally.errors["worker replaced after it exited"] += 1
            time.sleep(0.5)

    # Faults

    def a_call_in_flight(self, seconds: float = 30) -> int | None:
        """The pid of a worker in the middle of a tool call, once there is one."""
        folder = self.ledger.with_suffix(".inflight")
        pids = {process.pid for process in self.workers}
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not self.stop.is_set():
            for marker in folder.glob("*") if folder.exists() else ():
                try:
                    pid = int(marker.read_text() or 0)
                except (OSError, ValueError):
                    continue
                if pid in pids:
                    return pid
            time.sleep(0.01)
        return None

    def inject_faults(self) -> None:
        steps = [
            ("worker killed mid-call", self.kill_a_worker_mid_call),
            ("web process killed mid-decision", self.kill_a_web_mid_decision),
            ("PostgreSQL restarted mid-run", self.restart_postgres_mid_run),
            ("Redis stopped and started", self.bounce_redis),
            ("worker killed mid-call", self.kill_a_worker_mid_call),
            ("web process killed mid-decision", self.kill_a_web_mid_decision),
        ]
        for name, step in steps:
            if self.stop.wait(2.0):
                return
            if step():
                self.tally.faults[name] += 1

    def kill_a_worker_mid_call(self) -> bool:
        pid = self.a_call_in_flight()
        victim = next((process for process in self.workers if process.pid == pid), None)
        if victim is None:
            return False
        victim.kill()
        victim.start()
        return True

    def kill_a_web_mid_decision(self) -> bool:
        """Decisions in flight to one web process when it is SIGKILLed; each is sent again to the
        other (a 409 then says the first had been taken). Runs are started for it if none wait."""
        self.decisions_paused.set()
        try:
            deadline = time.monotonic() + 20
            pending = self.undecided()
            if len(pending) < 3:
                self.start_more(4)
            while len(pending) < 3 and time.monotonic() < deadline:
                time.sleep(0.2)
                pending = self.undecided()
            if not pending:
                return False
            victim = 1
            sending = [
                threading.Thread(target=self.decide, args=(a,), kwargs={"via": victim}) for a in pending[:6]
            ]
            for thread in sending:
                thread.start()
            time.sleep(random.uniform(0.005, 0.03))  # some requests in the middle of their decision
            self.webs[victim].kill()
            for thread in sending:
                thread.join()
            self.webs[victim].start()
            return True
        finally:
            self.decisions_paused.clear()

    def undecided(self) -> list[dict]:
        items = self.http("GET", "/api/v1/approvals", params={"status": "pending", "limit": 50}).json()[
            "items"
        ]
        return [approval for approval in items if approval["id"] not in self.tally.decided]

    def start_more(self, count: int) -> None:
        for index in range(count):
            body = {"agentId": "chaos.writer", "input": {"userMessage": f"extra {index}"}}
            response = self.http("POST", "/api/v1/runs", json=body)
            if response.status_code == 201:
                with self.tally.lock:
                    self.tally.started.append(response.json()["id"])

    def restart_postgres_mid_run(self) -> bool:
        if self.a_call_in_flight() is None:
            return False
        self.postgres.restart()
        return True

    def bounce_redis(self) -> bool:
        """Redis away for a while: decisions must go on (live views catch up when they reconnect).
        A run started while it is away gives the reviewer something to decide."""
        with self.tally.lock:
            self.tally.redis_down = True
        self.redis.stop()
        response = self.http(
            "POST",
            "/api/v1/runs",
            json={"agentId": "chaos.writer", "input": {"userMessage": "while Redis is away"}},
        )
        if response.status_code == 201:
            with self.tally.lock:
                self.tally.started.append(response.json()["id"])
        deadline = time.monotonic() + 15
        while self.tally.decisions_while_redis_was_down == 0 and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)
        self.redis.start()
        with self.tally.lock:
            self.tally.redis_down = False
        return True

    # WebSocket clients

    def follow(self, run_id: str) -> None:
        """Follow one run's journal over its socket, reconnecting to any web process whenever the
        socket goes (or falls silent), with ?after= the last entry seen; once the run has ended,
        one more reconnect replays what is left. Then: was anything missed?"""
        from websockets.sync.client import connect

        seen: set[int] = set()
        while not self.stop.is_set():
            ended = _with_database(lambda: _has_ended(run_id))  # then this connection's replay has it all
            port = self.webs[random.randrange(len(self.webs))].port
            url = f"ws://127.0.0.1:{port}/ws/runs/{run_id}/?after={max(seen, default=0)}"
            try:
                with connect(url, additional_headers=self.headers, open_timeout=5) as socket:
                    while True:
                        event = json.loads(socket.recv(timeout=2))
                        if event.get("type") == "replay.done":
                            if ended:
                                break
                        elif event["runId"] == run_id:
                            seen.add(event["entry"]["sequence"])
            except TimeoutError:
                pass  # silent for a while (Redis may have been away): look again
            except Exception:  # the socket went: a web process killed, Redis away
                self.tally.add("socket_reconnects")
                time.sleep(0.3)
                continue
            if ended:
                break
        last = _with_database(lambda: _last_sequence(run_id))
        missed = sorted(set(range(1, last + 1)) - seen)
        with self.tally.lock:
            self.tally.socket_missed[run_id] = missed


def _has_ended(run_id: str) -> bool:
    from runs.models import Run

    return Run.objects.filter(pk=run_id, status__in=["completed", "failed", "cancelled"]).exists()


def _last_sequence(run_id: str) -> int:
    from runs.models import Run

    return Run.objects.values_list("last_sequence", flat=True).get(pk=run_id)


def _with_database(operation):
    """``operation()``, asked again while the database restarts."""
    from django.db import InterfaceError, OperationalError, close_old_connections, connection

    for _attempt in range(120):
        try:
            return operation()
        except (OperationalError, InterfaceError):
            connection.close()
            close_old_connections()
            time.sleep(0.5)
    return operation()


def account(*, tally: Tally, ledger: Path) -> dict:
    """The figures, from the database and the ledger the tools wrote."""
    from approvals.models import Approval
    from runs.models import JournalEntry, Run

    runs = Run.objects.filter(pk__in=tally.started)
    statuses = Counter(runs.values_list("status", flat=True))
    lines = ledger.read_text().splitlines() if ledger.exists() else []
    by_key = Counter(line.split()[0] for line in lines)
    waits = JournalEntry.objects.filter(run__in=runs, kind="wait.suspended").values_list("payload", flat=True)
    waited_for = {
        payload["waitpoint"].get("approvalId")
        for payload in waits
        if payload["waitpoint"].get("kind") == "approval"
    }
    approvals = set(Approval.objects.filter(run__in=runs).values_list("pk", flat=True))
    lost = len({a for a in waited_for if a} - {str(a) for a in approvals})
    stranded = runs.filter(status="suspended").exclude(approvals__status="pending").count()
    failures = Counter(runs.filter(status="failed").values_list("failure_message", flat=True))
    return {
        "runs": {
            "started": len(tally.started),
            "completed": statuses.get("completed", 0),
            "failed": statuses.get("failed", 0),
            "unfinished": sum(
                v for k, v in statuses.items() if k not in ("completed", "failed", "cancelled")
            ),
            "failures": dict(failures),
        },
        "faults": dict(tally.faults),
        "toolCalls": {
            "keys": len(by_key),
            "exactlyOnce": sum(1 for count in by_key.values() if count == 1),
            "moreThanOnce": sum(1 for count in by_key.values() if count > 1),
            "heldForReview": tally.held_for_review,
        },
        "approvalsLost": lost + stranded,
        "decisionsRefusedAsArrivedTwice": tally.refused_twice,
        "decisionsWhileRedisWasDown": tally.decisions_while_redis_was_down,
        "sockets": {
            "clients": len(tally.socket_missed),
            "reconnects": tally.socket_reconnects,
            "missedAnEventAfterReconnecting": sum(1 for missed in tally.socket_missed.values() if missed),
        },
        "driverErrors": dict(tally.errors),
    }


def healthy(figures: dict) -> bool:
    return (
        figures["approvalsLost"] == 0
        and figures["toolCalls"]["moreThanOnce"] == 0
        and figures["sockets"]["missedAnEventAfterReconnecting"] == 0
        and figures["runs"]["unfinished"] == 0
    )


def print_figures(figures: dict) -> None:
    rows = [
        ("runs started", figures["runs"]["started"]),
        ("runs completed", figures["runs"]["completed"]),
        ("runs failed", figures["runs"]["failed"]),
        ("runs unfinished", figures["runs"]["unfinished"]),
        *((f"fault: {name}", count) for name, count in sorted(figures["faults"].items())),
        ("tool calls (idempotency keys)", figures["toolCalls"]["keys"]),
        ("  executed exactly once", figures["toolCalls"]["exactlyOnce"]),
        ("  executed more than once (must be 0)", figures["toolCalls"]["moreThanOnce"]),
        ("  not idempotent, interrupted: held for review", figures["toolCalls"]["heldForReview"]),
        ("approvals lost (must be 0)", figures["approvalsLost"]),
        ("decisions refused: they arrived twice", figures["decisionsRefusedAsArrivedTwice"]),
        ("decisions taken while Redis was down", figures["decisionsWhileRedisWasDown"]),
        (
            "socket clients / reconnects",
            f"{figures['sockets']['clients']} / {figures['sockets']['reconnects']}",
        ),
        (
            "clients that missed an event after reconnecting (must be 0)",
            figures["sockets"]["missedAnEventAfterReconnecting"],
        ),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for message, count in figures["runs"]["failures"].items():
        print(f"  failed {count}x: {message}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="gated runs to drive (default 200)")
    parser.add_argument("--sockets", type=int, default=12, help="WebSocket clients following runs")
    parser.add_argument("--seconds", type=float, default=600, help="give up after this long")
    parser.add_argument(
        "--json", type=Path, help="where to write the figures (default bench/results/chaos-<date>.json)"
    )
    args = parser.parse_args(argv)
    if POSTGRES_BIN is None or shutil.which("redis-server") is None:
        print(
            "make chaos needs PostgreSQL's server programs and redis-server on this machine", file=sys.stderr
        )
        return 2

    folder = Path(tempfile.mkdtemp(prefix="kindgi-chaos-"))
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        folder.chmod(0o777)
    postgres, redis = Postgres(folder), Redis(folder)
    processes: list[Process] = []
    try:
        postgres.start()
        redis.start()
        ledger = folder / "ledger.txt"
        env = os.environ | {
            "DJANGO_SETTINGS_MODULE": "kindgi_site.settings",
            "DATABASE_URL": postgres.url,
            "REDIS_URL": redis.url,
            "KINDGI_TASKS": "db",
            "KINDGI_PACKS": "packs.my_pack,packs.acme_ops,bench.chaos_pack",
            "KINDGI_DEBUG": "false",
            "SECRET_KEY": "chaos-" + os.urandom(32).hex(),
            "KINDGI_ENCRYPTION_KEY": base64.urlsafe_b64encode(os.urandom(32)).decode(),
            "KINDGI_SSL_REDIRECT": "false",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "KINDGI_LOG_FORMAT": "json",
            "KINDGI_LOG_LEVEL": "WARNING",
            "KINDGI_RUN_LEASE_SECONDS": "4",
            "KINDGI_DB_CONN_MAX_AGE": "0",
            "KINDGI_CHAOS_LEDGER": str(ledger),
        }
        os.environ.update(env)
        import django

        django.setup()
        import logging

        from django.core.management import call_command

        logging.getLogger("kindgi").setLevel(logging.ERROR)  # the figures say what happened

        call_command("migrate", verbosity=0)
        token = _reviewer_token()
        webs = [web(env, folder / f"web-{n}.log") for n in (1, 2)]
        workers = [worker(env, folder / f"worker-{n}.log") for n in (1, 2)]
        processes = [*webs, *workers]
        for process in processes:
            process.start()
        chaos = Chaos(
            webs=webs,
            workers=workers,
            postgres=postgres,
            redis=redis,
            token=token,
            runs=args.runs,
            ledger=ledger,
        )
        figures = _drive(chaos, sockets=args.sockets, seconds=args.seconds)
        figures |= {
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        }
    finally:
        for process in processes:
            process.kill()
        redis.stop()
        with contextlib.suppress(subprocess.CalledProcessError):
            postgres.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print_figures(figures)
    path = args.json or ROOT / "bench" / "results" / f"chaos-{datetime.date.today().isoformat()}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n")
    print(f"\nwritten to {path} ({figures['seconds']} s)")
    return 0 if healthy(figures) else 1


def _reviewer_token() -> str:
    from django.contrib.auth import get_user_model

    from approvals.models import Reviewer
    from tenants.models import Membership, Tenant
    from tenants.tokens import do_create_token

    tenant = Tenant.objects.create(slug="chaos", name="Chaos")
    user = get_user_model().objects.create_user(username="reviewer")
    Membership.objects.create(user=user, tenant=tenant, is_tenant_admin=True)
    Reviewer.objects.create(user=user, tenant=tenant, role="admin", display_name="Chaos reviewer")
    return do_create_token(user=user)[1]


def _drive(chaos: Chaos, *, sockets: int, seconds: float) -> dict:
    started = time.monotonic()
    threads = [
        threading.Thread(target=chaos.start_runs, name="starter"),
        threading.Thread(target=chaos.decide_forever, name="decider", daemon=True),
        threading.Thread(target=chaos.recover_forever, name="recoverer", daemon=True),
        threading.Thread(target=chaos.keep_workers, name="supervisor", daemon=True),
        threading.Thread(target=chaos.inject_faults, name="faults"),
    ]
    for thread in threads:
        thread.start()
    _wait_until(
        lambda: len(chaos.tally.started) >= min(sockets, chaos.runs), what="the first runs", seconds=120
    )
    followers = [
        threading.Thread(target=chaos.follow, args=(run_id,), name=f"socket-{n}", daemon=True)
        for n, run_id in enumerate(chaos.tally.started[:sockets])
    ]
    for follower in followers:
        follower.start()

    def finished() -> bool:
        from runs.models import Run

        if threads[0].is_alive() or threads[-1].is_alive():
            return False
        open_runs = Run.objects.filter(pk__in=chaos.tally.started).exclude(
            status__in=["completed", "failed", "cancelled"]
        )
        return not open_runs.exists()

    deadline = started + seconds
    while time.monotonic() < deadline and not _with_database(finished):
        time.sleep(0.5)
    for follower in followers:
        follower.join(timeout=max(1, deadline - time.monotonic()))
    chaos.stop.set()
    for thread in threads:
        thread.join(timeout=30)
    figures = _with_database(lambda: account(tally=chaos.tally, ledger=chaos.ledger))
    figures["seconds"] = round(time.monotonic() - started, 1)
    return figures


if __name__ == "__main__":
    sys.exit(main())
