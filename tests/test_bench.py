"""The benchmark harness: the figures land where bench/README.md says, as median, min and max.
(No figure is judged here: targets live in `make bench`, never in timed tests.)"""

import json
import subprocess
import sys
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


def test_an_unknown_workload_is_a_usage_error():
    result = bench("--only", "W1,W9")
    assert result.returncode == 2
    assert "no workload W9 (there are W1, W2, W3, W4, W5, W6, W7, W8)" in result.stderr


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
