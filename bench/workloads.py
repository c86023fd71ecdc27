"""The workloads, each run inside a process already set up for its variant (bench.run).

Each returns {figure: {median, min, max}}; every figure is the median of at least five
repetitions, except W7's: each of its passes is one long run of the whole system, and its
percentiles are over that pass's hundreds of decisions. ``quick`` shrinks the repetitions'
size, never their number.
"""

import os
import time
from collections.abc import Callable
from functools import cache

from bench.counting import counting
from bench.floor import floor_postgres, floor_sqlite
from bench.servers import Daphne
from bench.stats import percentile, summary

REPETITIONS = 5


@cache  # looked up once: what is timed is Kindgi's work, not the benchmark's own
def _tenant():
    from tenants.models import Tenant

    tenant, _ = Tenant.objects.get_or_create(slug="bench", defaults={"name": "Bench"})
    return tenant


def _reviewer(username: str = "bench-reviewer", *, tenant_admin: bool = False):
    from django.contrib.auth import get_user_model

    from approvals.models import Reviewer
    from tenants.models import Membership

    user, created = get_user_model().objects.get_or_create(username=username)
    if created:
        Membership.objects.create(user=user, tenant=_tenant(), is_tenant_admin=tenant_admin)
        Reviewer.objects.create(user=user, tenant=_tenant(), role="admin", display_name="Bench")
    return user


def _timed(work: Callable[[], object]) -> tuple[float, object]:
    started = time.perf_counter()
    result = work()
    return (time.perf_counter() - started) * 1000, result


@cache
def _principal():
    """The person the workloads' runs stand on (their principal): a member who is no reviewer."""
    from django.contrib.auth import get_user_model

    from tenants.models import Membership

    user, created = get_user_model().objects.get_or_create(username="bench-principal")
    if created:
        Membership.objects.create(user=user, tenant=_tenant())
    return get_user_model().objects.select_related("membership").get(pk=user.pk)


def _turn(agent_id: str, message: str):
    from runs.actions import check_start_run

    return check_start_run(
        tenant=_tenant(), principal=_principal(), agent_id=agent_id, input={"userMessage": message}
    )


# W1 ─ sequential calls ──────────────────────────────────────────────────────────────────────


def _per_call(calls: int) -> tuple[float, float, float]:
    with counting() as counts:
        elapsed, run = _timed(lambda: _turn("bench.sequential", str(calls)))
    assert run.status == "completed", run.failure_message
    return elapsed / calls, counts.statements / calls, counts.commits / calls


def sequential_calls(quick: bool) -> dict:
    _per_call(5)  # warm up: imports, caches, the first connection
    measured = [_per_call(50) for _ in range(REPETITIONS)]
    figures = {
        "per_call_ms": summary([m[0] for m in measured]),
        "statements_per_call": summary([m[1] for m in measured]),
        "commits_per_call": summary([m[2] for m in measured]),
    }
    small = [_per_call(10)[0] for _ in range(REPETITIONS)]
    large_calls = 100 if quick else 500
    large = [_per_call(large_calls)[0] for _ in range(REPETITIONS)]
    figures["per_call_ms_at_10"] = summary(small)
    figures[f"per_call_ms_at_{large_calls}"] = summary(large)
    # How much dearer a call is in a long turn than in a short one (1.0: flat).
    figures["growth_from_10"] = summary([b / a for a, b in zip(sorted(small), sorted(large), strict=True)])
    return figures


# W2 ─ concurrent reads, lone writes ────────────────────────────────────────────────────────


def _fan_out_step(tool_id: str) -> float:
    """One model message asking for eight calls of ``tool_id`` (each sleeps 100 ms), then the
    answer: the whole turn's time, so the step's figure includes Kindgi's cost around it."""
    elapsed, run = _timed(lambda: _turn("bench.fan-out", f"{tool_id} 8"))
    assert run.status == "completed", run.failure_message
    return elapsed


def concurrent_reads(quick: bool) -> dict:
    _fan_out_step("bench.sleep-read")  # warm up
    return {"step_ms": summary([_fan_out_step("bench.sleep-read") for _ in range(REPETITIONS)])}


def lone_writes(quick: bool) -> dict:
    _fan_out_step("bench.sleep-write")  # warm up
    writes, reads = [], []
    for _ in range(REPETITIONS):
        writes.append(_fan_out_step("bench.sleep-write"))
        reads.append(_fan_out_step("bench.sleep-read"))
    # About 8 when each write ran alone.
    return {
        "step_ms": summary(writes),
        "over_reads": summary([w / r for w, r in zip(writes, reads, strict=True)]),
    }


# W3 ─ the approval cycle ────────────────────────────────────────────────────────────────────


def _pending_approval(run_id) -> str:
    from approvals.models import Approval

    return str(Approval.objects.values_list("pk", flat=True).get(run_id=run_id, status="pending"))


def _cycles(count: int, start: Callable[[], str], decide: Callable[[str], None]) -> tuple[list, list]:
    """Time ``start`` (a run up to its approval: returns the run's id) and ``decide`` (the
    approval, until the run completes); finding the approval between them is not timed."""
    suspend, resume = [], []
    for _ in range(count):
        elapsed, run_id = _timed(start)
        suspend.append(elapsed)
        approval_id = _pending_approval(run_id)
        resume.append(_timed(lambda approval_id=approval_id: decide(approval_id))[0])
    return suspend, resume


def _cycle_figures(repetitions: list[tuple[list, list]]) -> dict:
    figures = {}
    for name, index in (("suspend", 0), ("resume", 1)):
        figures[f"{name}_p50_ms"] = summary([percentile(rep[index], 0.5) for rep in repetitions])
        figures[f"{name}_p95_ms"] = summary([percentile(rep[index], 0.95) for rep in repetitions])
    return figures


def approval_cycle_services(quick: bool) -> dict:
    from approvals.actions.decisions import check_complete_approval

    ada = _reviewer()

    def start() -> str:
        run = _turn("acme-ops.status-agent", "All systems go.")
        assert run.status == "suspended"
        return run.pk

    def decide(approval_id: str) -> None:
        check_complete_approval(approval_id=approval_id, acting_user=ada, decision="approve")

    cycles = 10 if quick else 40
    _cycles(3, start, decide)
    figures = _cycle_figures([_cycles(cycles, start, decide) for _ in range(REPETITIONS)])
    return figures | _cycle_counts(start, decide)


def _cycle_counts(start: Callable[[], str], decide: Callable[[str], None]) -> dict:
    """The statements and commits of a suspend and of a resume, over a few cycles."""
    counted: dict[str, list[int]] = {name: [] for name in ("suspend", "resume")}
    commits: dict[str, list[int]] = {name: [] for name in ("suspend", "resume")}
    for _ in range(REPETITIONS):
        with counting() as counts:
            run_id = start()
        counted["suspend"].append(counts.statements)
        commits["suspend"].append(counts.commits)
        approval_id = _pending_approval(run_id)
        with counting() as counts:
            decide(approval_id)
        counted["resume"].append(counts.statements)
        commits["resume"].append(counts.commits)
    figures = {}
    for name in ("suspend", "resume"):
        figures[f"{name}_statements"] = summary(counted[name])
        figures[f"{name}_commits"] = summary(commits[name])
    return figures


def approval_cycle_http(quick: bool) -> dict:
    import httpx

    from tenants.tokens import do_create_token

    token = do_create_token(user=_reviewer())[1]
    with (
        Daphne() as server,
        httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}) as http,
    ):

        def start() -> str:
            body = {"agentId": "acme-ops.status-agent", "input": {"userMessage": "All systems go."}}
            run = http.post("/api/v1/runs", json=body).json()
            assert run["status"] == "suspended", run
            return run["id"]

        def decide(approval_id: str) -> None:
            response = http.post(f"/api/v1/approvals/{approval_id}/complete", json={"decision": "approve"})
            assert response.status_code == 200, response.text

        cycles = 10 if quick else 40
        _cycles(3, start, decide)
        return _cycle_figures([_cycles(cycles, start, decide) for _ in range(REPETITIONS)])


# W4 ─ the queue at scale ────────────────────────────────────────────────────────────────────


def _pending_approvals(total: int) -> None:
    """Bring the tenant's pending approvals up to ``total``, across 50 agents, written in bulk
    (what matters here is reading them back)."""
    from approvals.models import Approval
    from runs.models import Run

    tenant = _tenant()
    have = Approval.objects.filter(tenant=tenant, status="pending").count()
    for start in range(have, total, 1000):
        batch = range(start, min(start + 1000, total))
        runs = Run.objects.bulk_create(
            Run(
                tenant=tenant,
                flow_key="agent.turn",
                flow_version="1.1.0",
                agent_key=f"bench.agent-{n % 50}",
                agent_version="1.0.0",
                status="suspended",
                input={"userMessage": f"message {n}"},
            )
            for n in batch
        )
        Approval.objects.bulk_create(
            Approval(
                tenant=tenant,
                run=run,
                call_id=f"call-{n}",
                tool_key="acme-ops.post-update",
                tool_version="0.1.0",
                agent_key=run.agent_key,
                agent_version="1.0.0",
                arguments={"message": f"update {n}"},
                required_role="standard",
                gate={"gate": "ask", "reason": "bench"},
            )
            for n, run in zip(batch, runs, strict=True)
        )


def _page_timings(client, path: str, requests: int) -> tuple[list[float], int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    timings = []
    for _ in range(requests):
        with CaptureQueriesContext(connection) as queries:
            elapsed, response = _timed(lambda: client.get(path))
        assert response.status_code == 200, response.status_code
        timings.append(elapsed)
    return timings, len(queries.captured_queries)


def queue_at_scale(quick: bool) -> dict:
    from django.test import Client

    from tenants.tokens import do_create_token

    ada = _reviewer()
    api = Client(HTTP_HOST="127.0.0.1", HTTP_AUTHORIZATION=f"Bearer {do_create_token(user=ada)[1]}")
    console = Client(HTTP_HOST="127.0.0.1")
    console.force_login(ada)
    pages = {"api": (api, "/api/v1/approvals?status=pending"), "console": (console, "/console/queue/")}
    requests = 10 if quick else 20
    figures = {}
    for total in (100, 10_000):
        _pending_approvals(total)
        for name, (client, path) in pages.items():
            _page_timings(client, path, 3)  # warm up
            repetitions = [_page_timings(client, path, requests) for _ in range(REPETITIONS)]
            figures[f"{name}_p50_ms_at_{total}"] = summary([percentile(rep[0], 0.5) for rep in repetitions])
            figures[f"{name}_p95_ms_at_{total}"] = summary([percentile(rep[0], 0.95) for rep in repetitions])
            figures[f"{name}_queries_at_{total}"] = summary([rep[1] for rep in repetitions])
    for name in pages:
        grown = figures[f"{name}_queries_at_10000"]["median"] - figures[f"{name}_queries_at_100"]["median"]
        figures[f"{name}_query_growth"] = summary([grown] * REPETITIONS)
    return figures


# W5 ─ live fan-out ──────────────────────────────────────────────────────────────────────────


class _Listeners:
    """``count`` WebSocket clients of /ws/approvals/ in a child process (bench.listeners),
    noting when each hears of each decision."""

    def __init__(self, url: str, token: str, count: int):
        self.url, self.token, self.count = url, token, count
        self.heard: dict[str, list[float]] = {}

    def __enter__(self) -> "_Listeners":
        import subprocess
        import sys
        import threading

        from bench.servers import ROOT

        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.listeners", self.url, self.token, str(self.count)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError("the listeners did not connect")
        threading.Thread(target=self._read, daemon=True).start()
        return self

    def _read(self) -> None:
        for line in self.process.stdout:
            approval_id, heard = line.split()
            self.heard.setdefault(approval_id, []).append(float(heard))

    def wait_for(self, approval_id: str, seconds: float = 10) -> list[float]:
        deadline = time.monotonic() + seconds
        while len(self.heard.get(approval_id, [])) < self.count:
            if time.monotonic() > deadline:
                raise RuntimeError(f"{len(self.heard.get(approval_id, []))} of {self.count} clients heard")
            time.sleep(0.002)
        return self.heard[approval_id]

    def __exit__(self, *exc) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def live_fan_out(quick: bool) -> dict:
    """Decisions made in this process (their commit timed exactly), heard by clients (in a
    process of their own) of a daphne process, through the Redis channel layer."""
    from django.db import connection

    from approvals.actions.decisions import check_complete_approval
    from tenants.tokens import do_create_token

    ada = _reviewer()
    clients = 50 if quick else 200
    decisions = 4 if quick else 10
    commits: list[float] = []
    original_commit = connection._commit

    def timed_commit():
        result = original_commit()
        commits.append(time.monotonic())
        return result

    repetitions = []
    with Daphne() as server, _Listeners(server.url, do_create_token(user=ada)[1], clients) as listeners:
        for _ in range(REPETITIONS):
            latencies = []
            for _ in range(decisions):
                approval_id = _pending_approval(_turn("acme-ops.status-agent", "Fan it out.").pk)
                commits.clear()
                connection._commit = timed_commit
                try:
                    check_complete_approval(approval_id=approval_id, acting_user=ada, decision="approve")
                finally:
                    connection._commit = original_commit
                committed = commits[0]
                latencies += [(heard - committed) * 1000 for heard in listeners.wait_for(approval_id)]
            repetitions.append(latencies)
    return {
        "clients": summary([clients] * REPETITIONS),
        "p50_ms": summary([percentile(rep, 0.5) for rep in repetitions]),
        "p95_ms": summary([percentile(rep, 0.95) for rep in repetitions]),
        "max_ms": summary([max(rep) for rep in repetitions]),
    }


# W6 ─ throughput with workers ───────────────────────────────────────────────────────────────


# Runs each worker finishes before a pass counts (its first ones load the catalog, connect,
# and compile what it reads).
WARM_UP_RUNS = 3


def _throughput(workers: int, runs: int) -> float:
    """Runs per second the workers get through in their steady state: the runs are queued
    first, then the workers start; measured from the moment every worker has finished its
    first ``WARM_UP_RUNS`` to the last run's finish, over the runs started in that time. So
    neither queueing nor start-up counts, nor the time one worker had the queue to itself
    because another started later (a third of a pass of 60 runs, at times, with two)."""
    from collections import defaultdict

    from django.db.models import Max
    from django_tasks_db.models import DBTaskResult

    from bench.servers import Workers
    from runs.models import Run

    DBTaskResult.objects.all().delete()  # this pass's tasks only, below
    ids = [_turn("bench.sequential", "3").pk for _ in range(runs)]
    with Workers(workers):
        deadline = time.monotonic() + 180
        while Run.objects.filter(pk__in=ids, status="completed").count() < runs:
            if time.monotonic() > deadline:
                raise RuntimeError("the workers did not finish within three minutes")
            time.sleep(0.05)
    finished = defaultdict(list)
    for worker_ids, at in DBTaskResult.objects.values_list("worker_ids", "finished_at"):
        finished[worker_ids[-1]].append(at)
    if len(finished) < workers:
        raise RuntimeError(f"only {len(finished)} of the {workers} workers took a run")
    warm = max(sorted(times)[WARM_UP_RUNS - 1] for times in finished.values())
    counted = DBTaskResult.objects.filter(started_at__gte=warm)
    last = counted.aggregate(last=Max("finished_at"))["last"]
    return counted.count() / (last - warm).total_seconds()


def throughput(quick: bool) -> dict:
    runs = 40 if quick else 150
    one = [_throughput(1, runs) for _ in range(REPETITIONS)]
    two = [_throughput(2, runs) for _ in range(REPETITIONS)]
    return {
        "runs_per_s_1_worker": summary(one),
        "runs_per_s_2_workers": summary(two),
        "speedup": summary([b / a for a, b in zip(one, two, strict=True)]),
    }


# W7 ─ the whole system under load ──────────────────────────────────────────────────────────

SYSTEM_REVIEWERS = 10
SYSTEM_STARTERS = 4


def _reviewer_tokens(count: int) -> list[str]:
    from tenants.tokens import do_create_token

    return [do_create_token(user=_reviewer(f"bench-reviewer-{n}"))[1] for n in range(count)]


class _SystemDriver:
    """Starts ``turns`` gated agent turns through the API of the web processes, while
    ``SYSTEM_REVIEWERS`` reviewers, each with a token of their own, decide the approvals through
    the API as they appear (one lister hands them out, so no two reviewers take the same one)."""

    def __init__(self, urls: list[str], tokens: list[str], turns: int):
        import queue
        import threading

        self.urls, self.tokens, self.turns = urls, tokens, turns
        self.started: list[str] = []
        self.decided = 0
        self.errors: list[str] = []
        self.pending: queue.Queue = queue.Queue()
        self.lock = threading.Lock()
        self.done = threading.Event()

    def _client(self, index: int):
        import httpx

        return httpx.Client(
            base_url=self.urls[index % len(self.urls)],
            headers={"Authorization": f"Bearer {self.tokens[index % len(self.tokens)]}"},
            timeout=30,
        )

    def start_runs(self, index: int, count: int) -> None:
        body = {"agentId": "acme-ops.status-agent", "input": {"userMessage": "All systems go."}}
        with self._client(index) as http:
            for _ in range(count):
                response = http.post("/api/v1/runs", json=body)
                if response.status_code != 201:
                    self.errors.append(f"start: {response.status_code} {response.text[:200]}")
                    continue
                with self.lock:
                    self.started.append(response.json()["id"])

    def list_pending(self) -> None:
        """Hand out each pending approval once, as a reviewer's live console would show it.
        Found in the database, so that looking costs the web processes nothing."""
        from django.db import connection

        from approvals.models import Approval

        seen: set = set()
        try:
            while not self.done.is_set():
                for approval_id in Approval.objects.filter(status="pending").values_list("pk", flat=True):
                    if approval_id not in seen:
                        seen.add(approval_id)
                        self.pending.put(str(approval_id))
                time.sleep(0.01)
        finally:
            connection.close()

    def decide(self, index: int) -> None:
        import queue

        with self._client(index) as http:
            while not self.done.is_set():
                try:
                    approval_id = self.pending.get(timeout=0.1)
                except queue.Empty:
                    continue
                response = http.post(
                    f"/api/v1/approvals/{approval_id}/complete", json={"decision": "approve"}
                )
                if response.status_code != 200:
                    self.errors.append(f"decide: {response.status_code} {response.text[:200]}")
                    continue
                with self.lock:
                    self.decided += 1
                    if self.decided == self.turns:
                        self.done.set()

    def drive(self, seconds: float = 600) -> list[str]:
        import threading

        share = [
            self.turns // SYSTEM_STARTERS + (n < self.turns % SYSTEM_STARTERS) for n in range(SYSTEM_STARTERS)
        ]
        threads = [
            threading.Thread(target=self.start_runs, args=(n, share[n])) for n in range(SYSTEM_STARTERS)
        ]
        threads.append(threading.Thread(target=self.list_pending))
        threads += [threading.Thread(target=self.decide, args=(n,)) for n in range(SYSTEM_REVIEWERS)]
        for thread in threads:
            thread.start()
        if not self.done.wait(seconds):
            self.done.set()
            raise RuntimeError(f"{self.decided} of {self.turns} decided in {seconds} s: {self.errors[:3]}")
        for thread in threads:
            thread.join()
        if self.errors:
            raise RuntimeError(f"{len(self.errors)} requests failed, the first: {self.errors[0]}")
        return self.started


def _system_pass(urls: list[str], tokens: list[str], pids: dict[str, list[int]], workers: int, turns: int):
    """One pass: the turns started and decided through the API with ``workers`` workers
    executing them; its figures from the times the database holds, and what the pass cost in
    CPU time per turn in each part of the system (``pids``: the web processes, PostgreSQL's and
    Redis's servers; the workers are added here)."""
    from django.db.models import Max, Min

    from approvals.models import Decision
    from bench.cpu import seconds_by_family
    from bench.servers import Workers
    from core.conf import setting
    from runs.models import JournalEntry, Run

    # As `kindgi worker` runs: the database queue's own worker, or RQ's or Celery's.
    command = "run_worker" if setting("KINDGI_TASK_QUEUE") == "db" else "run_queue_worker"
    with Workers(workers, command=command, interval=None) as running:
        families = pids | {"workers": running.pids}
        time.sleep(1)  # each worker started and waiting: what starting one costs is not a turn's
        before = seconds_by_family(families)
        ids = _SystemDriver(urls, tokens, turns).drive()
        deadline = time.monotonic() + 120
        while Run.objects.filter(pk__in=ids, status="completed").count() < turns:
            if time.monotonic() > deadline:
                raise RuntimeError("the workers did not finish the approved runs within two minutes")
            time.sleep(0.05)
        after = seconds_by_family(families)
    decided = dict(
        Decision.objects.filter(approval__run_id__in=ids).values_list("approval__run_id", "decided_at")
    )
    tool_started = dict(
        JournalEntry.objects.filter(run_id__in=ids, kind="tool.called").values_list("run_id", "created_at")
    )
    to_tool = [(tool_started[run] - at).total_seconds() * 1000 for run, at in decided.items()]
    decisions = sorted(decided.values())
    span = Run.objects.filter(pk__in=ids).aggregate(first=Min("created_at"), last=Max("finished_at"))
    cost = {name: (after[name] - before[name]) * 1000 / turns for name in families}
    total = sum(cost.values())
    return {
        "decisions_per_s": len(decisions) / (decisions[-1] - decisions[0]).total_seconds(),
        "decision_to_tool_p50_ms": percentile(to_tool, 0.5),
        "decision_to_tool_p95_ms": percentile(to_tool, 0.95),
        "runs_per_s": turns / (span["last"] - span["first"]).total_seconds(),
        "cpu_ms_per_turn": total,
        **{f"cpu_share_{name}": cost[name] / total for name in families},
    }


# Passes of each kind: one pass's p95 moved by a fifth from one run of the benchmark to the
# next on this two-core machine, so each figure is the median of three.
SYSTEM_PASSES = 3


def system_under_load(quick: bool) -> dict:
    """Two web processes and the workers on PostgreSQL and Redis, gated agent turns started
    and decided through the API by concurrent reviewers: passes with two workers and with one,
    taken in turn. A pass's percentiles are over all of its decisions. The queue is the one
    KINDGI_TASKS names: the database's (``cluster``) or RQ's (``cluster-rq``).

    Each pass also says what a turn costs: CPU milliseconds per approved turn summed over every
    process of the system (web, workers, PostgreSQL's server and its backends, Redis), and each
    part's share; the load generator (this process) is not counted."""
    from django.conf import settings

    from bench.cpu import postgres_server_pid, redis_server_pid
    from core.conf import setting

    if setting("KINDGI_TASK_QUEUE") == "rq":
        import redis

        redis.Redis.from_url(settings.RQ_QUEUES["default"]["URL"]).flushdb()  # no earlier run's jobs
    turns = 100 if quick else 500
    tokens = _reviewer_tokens(SYSTEM_REVIEWERS)
    passes: dict[int, list[dict[str, float]]] = {2: [], 1: []}
    with Daphne() as first, Daphne() as second:
        urls = [first.url, second.url]
        pids = {
            "web": [first.pid, second.pid],
            "postgres": [postgres_server_pid()],
            "redis": [redis_server_pid(os.environ["REDIS_URL"])],
        }
        _system_pass(urls, tokens, pids, 2, 10)  # warm up: both processes, the catalog, the caches
        for _ in range(SYSTEM_PASSES):
            for workers, done in passes.items():
                done.append(_system_pass(urls, tokens, pids, workers, turns))
    figures = {}
    for workers, suffix in ((2, "2_workers"), (1, "1_worker")):
        for name in passes[workers][0]:
            figures[f"{name}_{suffix}"] = summary([done[name] for done in passes[workers]])
    speedups = [two["runs_per_s"] / one["runs_per_s"] for two, one in zip(passes[2], passes[1], strict=True)]
    figures["speedup"] = summary(speedups)
    figures["turns"] = summary([turns])
    return figures


# W8 ─ policy at scale ──────────────────────────────────────────────────────────────────────

POLICY_PACKS = 100


def _policy_at_scale() -> None:
    """1,000 approval rules for the tenant (exact tools, packs' globs, agents' any-tool rules,
    and one for the status page's tool), 100 of them with budgets (the status page's among them,
    so the approval cycle measured here is a budgeted call's), 100 active standing grants, and
    admin overrides for 100 agents."""
    from datetime import timedelta

    from django.utils import timezone

    from approvals.models import ApprovalRule, Grant
    from tools.models import Agent, AgentGateOverride

    tenant = _tenant()
    rules = []
    for index in range(999):
        pack = f"pack-{index % POLICY_PACKS}"
        shape = index % 10
        if shape == 0:
            budget = {"scope": "run", "sumOf": "/amountCents", "maxSum": 100_000, "overBudget": "always_ask"}
            fields = {"tool_pattern": f"{pack}.tool-{index}", "gate": "always_ask", "budget": budget}
        elif shape < 6:
            fields = {"tool_pattern": f"{pack}.tool-{index}", "gate": "always_ask"}
        elif shape < 9:
            fields = {"tool_pattern": f"{pack}.*", "agent_pattern": f"{pack}.agent", "gate": "ask_once"}
        else:
            fields = {"agent_pattern": f"{pack}.agent", "gate": "never_ask"}
        rules.append(ApprovalRule(tenant=tenant, name=f"rule {index}", **fields))
    rules.append(
        ApprovalRule(
            tenant=tenant,
            name="status posts",
            tool_pattern="acme-ops.post-update",
            gate="always_ask",
            budget={"scope": "tenant", "maxCalls": 1_000_000, "overBudget": "always_ask"},
        )
    )
    ApprovalRule.objects.bulk_create(rules)
    granter = _reviewer()
    Grant.objects.bulk_create(
        Grant(
            tenant=tenant,
            granter=granter,
            tool_pattern=f"pack-{index}.tool-{index}*",
            scope=Grant.Scope.PRINCIPAL,
            principal=_principal(),
            max_calls=10,
            expires_at=timezone.now() + timedelta(hours=1),
        )
        for index in range(POLICY_PACKS)
    )
    status_agent = Agent.objects.get(key="acme-ops.status-agent", version="0.1.0")
    agents = [
        Agent.objects.create(
            key=f"pack-{index}.agent",
            version="1.0.0",
            pack=f"pack-{index}",
            name="Policy",
            instructions="-",
            model="-",
        )
        for index in range(POLICY_PACKS - 1)
    ]
    AgentGateOverride.objects.bulk_create(
        [
            AgentGateOverride(agent=agent, tenant=tenant, tool_key=f"{agent.pack}.tool-1", gate="never_ask")
            for agent in agents
        ]
        + [AgentGateOverride(agent=status_agent, tenant=tenant, tool_key="acme-ops.greet", gate="always_ask")]
    )
    from tenants.config import bump_config_version

    bump_config_version(tenant.pk)  # bulk writes send no signals


def policy_at_scale(quick: bool) -> dict:
    """The gate's cost per call among 1,000 rules and 100 standing grants (compiled once for the
    tenant, from the cache the engine uses): the gate, and for a call it asks about, the grants'
    look for one that covers it; and the approval cycle with them in place."""
    from runs import policy_cache
    from runs.engine.gates import AgentGates, CallFacts, Gate, decide_gate
    from runs.engine.state import RunFacts
    from tenants.models import Tenant

    _policy_at_scale()
    tenant = Tenant.objects.get(pk=_tenant().pk)
    rules = policy_cache.tenant_rules(tenant.pk, tenant.config_version)
    grants = policy_cache.tenant_grants(tenant.pk, tenant.config_version)
    assert len(rules) == 1000
    assert len(grants) == POLICY_PACKS
    run = RunFacts(id="bench", principal=str(_principal().pk))
    roles = ("standard", "senior", "admin")
    agent = AgentGates(enabled=True, overrides={})
    calls = [
        CallFacts(
            tool_id=f"pack-{index % POLICY_PACKS}.tool-{index % 997}",
            agent_id=f"pack-{(index * 7) % POLICY_PACKS}.agent",
            read_only=False,
            effects=(("writes", "external:things"),),
        )
        for index in range(1000)
    ]
    per_call = []
    for _ in range(REPETITIONS):
        timings = []
        for call in calls:
            started = time.perf_counter()
            decision = decide_gate(call=call, agent=agent, rules=rules)
            if decision.gate == Gate.ASK:
                next((g for g in grants if g.covers(call, run, decision, roles=roles, four_eyes=False)), None)
            timings.append((time.perf_counter() - started) * 1000)
        per_call.append(percentile(timings, 0.5))
    return {"gate_p50_ms": summary(per_call, digits=4)} | approval_cycle_services(quick)


# Which function measures each (workload, variant); bench.__main__ says what each variant needs.
WORKLOADS: dict[tuple[str, str], Callable[[bool], dict]] = {
    ("W0", "sqlite"): floor_sqlite,
    ("W0", "postgres"): floor_postgres,
    ("W1", "sqlite"): sequential_calls,
    ("W1", "postgres"): sequential_calls,
    ("W2", "reads"): concurrent_reads,
    ("W2", "writes"): lone_writes,
    ("W3", "services"): approval_cycle_services,
    ("W3", "http"): approval_cycle_http,
    ("W4", "sqlite"): queue_at_scale,
    ("W5", "redis"): live_fan_out,
    ("W6", "postgres"): throughput,
    ("W7", "cluster"): system_under_load,
    ("W7", "cluster-rq"): system_under_load,
    ("W8", "sqlite"): policy_at_scale,
}
