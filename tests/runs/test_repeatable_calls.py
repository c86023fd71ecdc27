"""A call to a tool that is safe to repeat (read-only and idempotent) runs before its intent is
durable: its intent is written with its result, one commit where any other call takes two. Any
other call's intent is durable before it runs, so that a process dying in between has a person
asked, never the call repeated. Here the process dies inside the tool (a BaseException, which
nothing on the way catches), and recovery takes the run over as it would a dead worker's."""

from datetime import timedelta

import pytest
from django.utils import timezone

from bench.counting import counting
from runs.executor import execute
from runs.models import Run, RunStatus
from tests.pack_fixtures import probes
from tests.pack_fixtures.probes import SCRIPT, TIMELINE

from .helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)


class ProcessDied(BaseException):
    pass


def dies_in_the_tool(monkeypatch):
    working = probes._work

    def work_then_die(label, ctx):
        working(label, ctx)
        raise ProcessDied

    monkeypatch.setattr(probes, "_work", work_then_die)
    return lambda: monkeypatch.setattr(probes, "_work", working)


def taken_over(run: Run) -> Run:
    Run.objects.filter(pk=run.pk).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    execute(run.pk)
    return Run.objects.get(pk=run.pk)


def kinds(run: Run) -> list[str]:
    return list(run.journal.order_by("sequence").values_list("kind", flat=True))


def one_call(tool_id: str):
    return calls(("c", tool_id, {"label": "c", "pause_ms": 0}))


def test_a_repeatable_read_dying_midway_is_asked_for_again_and_repeated(monkeypatch):
    SCRIPT.replies = [one_call("probe.lookup"), one_call("probe.lookup"), answer()]
    revive = dies_in_the_tool(monkeypatch)
    with pytest.raises(ProcessDied):
        start("probe.free")
    run = Run.objects.get()
    assert run.status == RunStatus.RUNNING
    assert kinds(run) == ["run.started"]  # neither the model's reply nor the call was written
    revive()
    run = taken_over(run)
    assert run.status == RunStatus.COMPLETED
    assert not run.approvals.exists()
    assert TIMELINE.calls("c") == 2  # repeated, which is harmless for this tool
    assert kinds(run) == [
        "run.started",
        "model.called",
        "tool.called",
        "tool.completed",
        "model.called",
        "run.completed",
    ]


@pytest.mark.parametrize("tool_id", ["probe.peek", "probe.write"])
def test_any_other_call_dying_midway_waits_for_a_person(monkeypatch, tool_id):
    """A read that does not say it is idempotent is not repeated either: it might cost, or
    count, each time."""
    SCRIPT.replies = [one_call(tool_id), answer()]
    revive = dies_in_the_tool(monkeypatch)
    with pytest.raises(ProcessDied):
        start("probe.free")
    run = Run.objects.get()
    assert kinds(run) == ["run.started", "model.called", "tool.called"]  # durable before it ran
    revive()
    run = taken_over(run)
    assert run.status == RunStatus.SUSPENDED
    assert run.approvals.get().subject_kind == "tool-call:interrupted"
    assert TIMELINE.calls("c") == 1


def commits_of_a_turn(tool_id: str, count: int) -> int:
    SCRIPT.replies = [one_call(tool_id) for _ in range(count)] + [answer()]
    with counting() as counts:
        assert start("probe.free").status == RunStatus.COMPLETED
    return counts.commits


def test_a_repeatable_call_costs_one_commit_and_any_other_two():
    commits_of_a_turn("probe.lookup", 1)  # the first turn also fills the process's caches
    assert commits_of_a_turn("probe.lookup", 3) - commits_of_a_turn("probe.lookup", 2) == 1
    assert commits_of_a_turn("probe.peek", 3) - commits_of_a_turn("probe.peek", 2) == 2
