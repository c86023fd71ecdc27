"""The benchmark harness: the figures land where bench/README.md says, as median, min and max.
(No figure is judged here: targets live in `make bench`, never in timed tests.)"""

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.stats import percentile, summary

ROOT = Path(__file__).resolve().parent.parent


def bench(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "bench", *arguments], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


def test_the_quick_run_writes_each_figure_in_its_place(tmp_path):
    written = tmp_path / "bench.json"
    result = bench("--only", "W1,W2", "--quick", "--json", str(written), "--no-peers")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    data = json.loads(written.read_text())
    for workload, variant, figure in (("W1", "sqlite", "per_call_ms"), ("W2", "reads", "step_ms")):
        values = data["workloads"][workload][variant][figure]
        assert set(values) == {"median", "min", "max"}
        assert 0 < values["min"] <= values["median"] <= values["max"]
    assert set(data["workloads"]) == {"W1", "W2"}
    assert data["quick"] is True
    judged = {row["figure"]: row for row in data["targets"]}
    assert (
        judged["W1.sqlite.per_call_ms"]["median"]
        == data["workloads"]["W1"]["sqlite"]["per_call_ms"]["median"]
    )
    assert judged["W3.services.suspend_p50_ms"]["met"] is None  # not measured in this run
    assert "W1.sqlite.per_call_ms" in result.stdout  # the table
    reference = data["machine"]["reference_ms"]
    assert reference["start"] > 0
    assert reference["end"] > 0
    assert f"the reference work took {reference['start']} ms at the start" in result.stdout


def test_the_floor_is_measured_with_bare_statements_and_kindgi_is_printed_as_multiples_of_it(tmp_path):
    written = tmp_path / "bench.json"
    result = bench("--only", "W0,W1", "--quick", "--json", str(written), "--no-peers")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    data = json.loads(written.read_text())
    floor = data["workloads"]["W0"]["sqlite"]
    assert set(floor) == {"w1_call_ms", "w3_suspend_ms", "w3_resume_ms"}
    assert 0 < floor["w1_call_ms"]["median"] < floor["w3_resume_ms"]["median"]
    judged = {row["figure"]: row for row in data["targets"]}
    multiple = judged["W1.sqlite.per_call_ms / W0.sqlite.w1_call_ms"]
    kindgi = data["workloads"]["W1"]["sqlite"]["per_call_ms"]["median"]
    assert multiple["median"] == round(kindgi / floor["w1_call_ms"]["median"], 2)
    assert multiple["met"] is None  # printed as a multiple: no target of its own
    assert "W1.sqlite.per_call_ms / W0.sqlite.w1_call_ms" in result.stdout


def test_an_unknown_workload_is_a_usage_error():
    result = bench("--only", "W1,W9")
    assert result.returncode == 2
    assert "no workload W9 (there are W0, W1, W2, W3, W4, W5, W6, W7, W8)" in result.stderr


@pytest.mark.parametrize(
    ("values", "fraction", "expected"),
    [([3, 1, 2], 0.5, 2), ([1, 2, 3, 4], 0.5, 2), (list(range(1, 101)), 0.95, 95), ([7], 0.95, 7)],
)
def test_percentiles_are_nearest_rank(values, fraction, expected):
    assert percentile(values, fraction) == expected


def test_a_summary_is_median_min_and_max():
    assert summary([3.0, 1.0, 2.0, 10.0, 4.0]) == {"median": 3.0, "min": 1.0, "max": 10.0}


@pytest.mark.parametrize(
    ("sql", "writes"),
    [
        ('UPDATE "runs_run" SET "status" = %s', True),
        ('  insert into "runs_journalentry" VALUES (%s)', True),
        ('WITH advanced AS (UPDATE "runs_run" SET x = 1 RETURNING y) SELECT y FROM advanced', True),
        ('WITH recent AS (SELECT "updated_at" FROM "runs_run") SELECT * FROM recent', False),
        ('SELECT "id" FROM "runs_run" FOR UPDATE', False),
    ],
)
def test_a_statement_counts_as_a_write_when_it_or_a_part_of_it_writes(sql, writes):
    from bench.counting import _writes

    assert _writes(sql) is writes


def test_the_table_says_how_fast_the_machine_ran_beside_the_last_run():
    from bench.report import machine_line

    now = {"machine": {"reference_ms": {"start": 150.0, "end": 160.0}}}
    assert machine_line(now, {"machine": {"reference_ms": {"start": 50.0}}}) == (
        "machine speed: the reference work took 150.0 ms at the start, 160.0 ms at the end"
        " (3.00x the last run's 50.0 ms)"
    )
    assert machine_line(now, {"machine": {"cpus": 2}}).endswith("160.0 ms at the end")  # an older run
    assert machine_line({"machine": {"cpus": 2}}, None) == "machine speed: not measured"


def test_the_last_run_is_the_one_its_file_dates_last_whatever_the_files_mtimes(tmp_path):
    import os

    from bench.__main__ import previous_results

    for name, date, mtime in (
        ("2026-12-03T14-37-05.json", "2026-12-03T14:37:05+00:00", 100),
        ("2026-12-03T10-58-15.json", "2026-12-03T10:58:15+00:00", 100),  # a checkout: the same mtime
        ("2026-12-01.json", "2026-12-01T09:00:00+00:00", 200),  # touched later
        ("chaos-2026-12-04.json", "2026-12-04T00:00:00+00:00", 300),
    ):
        path = tmp_path / name
        path.write_text(json.dumps({"date": date, "workloads": {}}))
        os.utime(path, (mtime, mtime))
    (tmp_path / "broken.json").write_text("{")
    path, results = previous_results(tmp_path)
    assert path.name == "2026-12-03T14-37-05.json"
    assert results["date"] == "2026-12-03T14:37:05+00:00"
    assert previous_results(tmp_path / "none") is None


def figure(value: float) -> dict:
    return {"median": value, "min": value, "max": value}


def run_bench(monkeypatch, arguments: list[str], run_variant, measure_peers=None) -> None:
    """``python -m bench`` in this process, with each variant's process and the peers stood in
    for, every service answering and the machine's speed fixed."""
    import bench.__main__ as runner
    import bench.peers

    monkeypatch.setattr(runner, "_run_variant", run_variant)
    monkeypatch.setattr(runner, "_answers", lambda host, port: True)
    monkeypatch.setattr(runner, "reference_ms", lambda: 1.0)
    if measure_peers is not None:
        monkeypatch.setattr(bench.peers, "measure_peers", measure_peers)
    runner.main(arguments)


def test_kindgis_peered_variants_take_turns_with_their_peers_and_their_figures_are_kept_together(
    tmp_path, monkeypatch
):
    happened = []

    def run_variant(workload, variant, needs, tasks, quick, repetitions=None):
        happened.append(f"{workload} {variant} x{repetitions or 5}")
        return {"per_call_ms": figure(1.0)}

    def measure_peers(chosen, *, quick, repetitions=5):
        (workload,) = chosen
        happened.append(f"peers {workload} x{repetitions}")
        if workload == "W3":
            return {"langgraph": {"W3.resume": figure(2.0)}, "pydantic-ai": {"error": "it broke"}}
        return {"langgraph": {"W1.per_call": figure(3.0)}, "other": {"error": "not installed"}}

    written = tmp_path / "run.json"
    run_bench(monkeypatch, ["--only", "W1,W3", "--json", str(written)], run_variant, measure_peers)
    assert happened == (
        ["W1 sqlite x1", "W1 postgres x1", "peers W1 x1"] * 5
        + ["W3 http x5"]  # not set beside a peer: once, whole
        + ["W3 services x1", "peers W3 x1"] * 5
    )
    results = json.loads(written.read_text())
    assert list(results["workloads"]["W3"]) == ["services", "http"]
    peers = results["peers"]
    assert peers["langgraph"] == {"W1.per_call": figure(3.0), "W3.resume": figure(2.0)}
    assert peers["pydantic-ai"] == {"error": "it broke"}
    assert peers["other"] == {"error": "not installed"}


def test_without_peers_each_variant_runs_once_whole(tmp_path, monkeypatch):
    happened = []

    def run_variant(workload, variant, needs, tasks, quick, repetitions=None):
        happened.append((workload, variant, repetitions))
        return {"per_call_ms": figure(1.0)}

    run_bench(monkeypatch, ["--only", "W3", "--no-peers", "--json", str(tmp_path / "run.json")], run_variant)
    assert happened == [("W3", "services", None), ("W3", "http", None)]


def test_a_ratio_to_a_peer_is_the_median_of_the_rounds_ratios(tmp_path, monkeypatch):
    """Each round's two figures are taken seconds apart; the medians of each side over the
    rounds may come from rounds minutes apart, on a machine running at another speed."""
    from bench.report import side_by_side

    ours = iter([1.0, 2.0, 3.0, 4.0, 5.0])
    theirs = iter([1.0, 4.0, 1.0, 4.0, 1.0])  # the rounds' ratios: 1, 0.5, 3, 1, 5

    def run_variant(workload, variant, needs, tasks, quick, repetitions=None):
        if variant == "services":
            return {"resume_p50_ms": figure(next(ours))}
        return {"resume_p50_ms": figure(9.0)}

    def measure_peers(chosen, *, quick, repetitions=5):
        return {"langgraph": {"W3.resume_p50_ms_sqlite_agent": figure(next(theirs))}}

    written = tmp_path / "run.json"
    run_bench(monkeypatch, ["--only", "W3", "--json", str(written)], run_variant, measure_peers)
    results = json.loads(written.read_text())
    assert results["workloads"]["W3"]["services"]["resume_p50_ms"] == {"median": 3.0, "min": 1.0, "max": 5.0}
    assert results["peers"]["langgraph"]["W3.resume_p50_ms_sqlite_agent"]["median"] == 1.0
    name = "W3.services.resume_p50_ms / langgraph.W3.resume_p50_ms_sqlite_agent"
    assert results["paired_ratios"] == {name: {"median": 1.0, "min": 0.5, "max": 5.0}}
    (row,) = [row for row in side_by_side(results) if row["peer"].endswith("_sqlite_agent")]
    assert (row["kindgi_median"], row["peer_median"]) == (3.0, 1.0)  # 3.0x as a ratio of medians
    assert (row["ratio"], row["ratio_min"], row["ratio_max"]) == (1.0, 0.5, 5.0)
    assert row["met"] is False  # 1.0 > 0.5


def test_a_failed_round_fails_the_variant():
    from bench.__main__ import merge_rounds

    good = {"per_call_ms": figure(1.0)}
    assert merge_rounds([good, {"error": "exit 1: boom"}, good]) == {"error": "exit 1: boom"}
    assert merge_rounds([good, good]) == {"per_call_ms": figure(1.0)}


def test_a_familys_cpu_time_counts_its_children_also_those_that_ended():
    """W7's cost per turn: a worker's, or PostgreSQL's backends', CPU time is its family's."""
    from bench.cpu import family_seconds

    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import subprocess, sys, time; subprocess.run([sys.executable, '-c', {burn!r}]); time.sleep(30)",
        ]
    )
    children = Path(f"/proc/{parent.pid}/task/{parent.pid}/children")
    try:
        deadline = time.monotonic() + 30
        # Once the child has burned its 0.3 s, ended and been waited for, its time is still there.
        while children.read_text().strip() or family_seconds(parent.pid) < 0.3:
            assert time.monotonic() < deadline, "the ended child's time was not counted"
            time.sleep(0.05)
        assert family_seconds(parent.pid) < 5
    finally:
        parent.kill()
        parent.wait()
