"""What Prometheus reads about runs.

Run counts come from the database when scraped, so every web process reports the same
figures however many processes and machines run the work. Tool-call durations are
observed where the call runs (a worker, or a web process with immediate tasks) and are
reported by that process: its ``/metrics``, or a worker's ``--metrics-port``.
"""

from collections.abc import Iterator

from django.db.models import Count
from prometheus_client import Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from runs.models import FINISHED_STATUSES, Run, RunStatus

TOOL_CALL_SECONDS = Histogram(
    "kindgi_tool_call_duration_seconds",
    "How long tool calls took, from validating their input to checking their output.",
    ["tool", "outcome"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)


class RunsCollector:
    """Runs started, completed and failed by flow (an agent turn's flow is ``agent.turn``, its
    agent says which), and how many are queued, running or suspended now."""

    def collect(self) -> Iterator[Metric]:
        labels = ["flow", "agent"]
        started = CounterMetricFamily("kindgi_runs_started", "Runs started.", labels=labels)
        completed = CounterMetricFamily("kindgi_runs_completed", "Runs that completed.", labels=labels)
        failed = CounterMetricFamily("kindgi_runs_failed", "Runs that failed.", labels=labels)
        cancelled = CounterMetricFamily("kindgi_runs_cancelled", "Runs that were cancelled.", labels=labels)
        active = GaugeMetricFamily(
            "kindgi_runs_active", "Runs not finished yet, by status.", labels=["status"]
        )
        ended = {RunStatus.COMPLETED: completed, RunStatus.FAILED: failed, RunStatus.CANCELLED: cancelled}
        totals: dict[tuple[str, str], int] = {}
        unfinished = dict.fromkeys((RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.SUSPENDED), 0)
        rows = (
            Run.objects.order_by().values_list("flow_key", "agent_key", "status").annotate(count=Count("pk"))
        )
        for flow, agent, status, count in rows:
            totals[flow, agent] = totals.get((flow, agent), 0) + count
            if status in FINISHED_STATUSES:
                ended[status].add_metric([flow, agent], count)
            else:
                unfinished[status] += count
        for (flow, agent), count in sorted(totals.items()):
            started.add_metric([flow, agent], count)
        for status, count in unfinished.items():
            active.add_metric([status], count)
        yield from (started, completed, failed, cancelled, active)
