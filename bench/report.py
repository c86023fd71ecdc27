"""The targets, and the table that sets each figure beside its target (and the peers' figures)."""

import operator

# (workload, variant, figure, comparison, target): the targets for Kindgi.
TARGETS = [
    ("W1", "sqlite", "per_call_ms", "<=", 1.5),
    ("W1", "sqlite", "commits_per_call", "<=", 3),
    ("W1", "sqlite", "growth_from_10", "<=", 1.25),
    ("W2", "reads", "step_ms", "<=", 115),
    ("W3", "services", "suspend_p50_ms", "<=", 3),
    ("W3", "services", "resume_p50_ms", "<=", 3),
    ("W3", "services", "suspend_statements", "<=", 8),
    ("W3", "services", "suspend_commits", "<=", 2),
    ("W3", "services", "resume_statements", "<=", 10),
    ("W3", "services", "resume_commits", "<=", 2),
    ("W3", "http", "suspend_p50_ms", "<=", 8),
    ("W3", "http", "resume_p50_ms", "<=", 8),
    ("W4", "sqlite", "api_p95_ms_at_10000", "<", 50),
    ("W4", "sqlite", "console_p95_ms_at_10000", "<", 50),
    ("W4", "sqlite", "api_query_growth", "<=", 0),
    ("W4", "sqlite", "console_query_growth", "<=", 0),
    ("W5", "redis", "p95_ms", "<", 50),
    ("W6", "postgres", "speedup", ">=", 1.7),
    ("W7", "cluster", "decision_to_tool_p95_ms_2_workers", "<", 50),
    ("W8", "sqlite", "gate_p50_ms", "<=", 0.1),
]
COMPARE = {"<=": operator.le, "<": operator.lt, ">=": operator.ge}

# Kindgi's figure at most this multiple of a peer's, measured in the same run:
# (Kindgi figure, peer, peer figure, the largest ratio met).
RATIO_TARGETS = [
    ("W3.services.suspend_p50_ms", "langgraph", "W3.suspend_p50_ms_sqlite", 1.0),
    ("W3.services.resume_p50_ms", "langgraph", "W3.resume_p50_ms_sqlite", 1.0),
    ("W3.services.suspend_p50_ms", "langgraph", "W3.suspend_p50_ms_sqlite_agent", 0.5),
    ("W3.services.resume_p50_ms", "langgraph", "W3.resume_p50_ms_sqlite_agent", 0.5),
    ("W1.sqlite.per_call_ms", "langgraph", "W1.per_call_ms_sqlite_sync", 0.5),
    # Every effectful step durable, against a graph that keeps nothing.
    ("W1.sqlite.per_call_ms", "langgraph", "W1.per_call_ms_no_persistence", 1.5),
]

# One of Kindgi's figures at most this multiple of another of the same run:
# (figure, the figure it is held to, the largest ratio met).
RELATIVE_TARGETS = [
    # Kindgi against the floor (bench.floor): the same rows and commits, bare statements. A
    # limit of None: printed as a multiple, with no target.
    ("W1.postgres.per_call_ms", "W0.postgres.w1_call_ms", 3.0),
    ("W1.sqlite.per_call_ms", "W0.sqlite.w1_call_ms", None),
    ("W3.services.suspend_p50_ms", "W0.sqlite.w3_suspend_ms", None),
    ("W3.services.resume_p50_ms", "W0.sqlite.w3_resume_ms", None),
    ("W8.sqlite.suspend_p50_ms", "W3.services.suspend_p50_ms", 1.1),
    ("W8.sqlite.resume_p50_ms", "W3.services.resume_p50_ms", 1.1),
]

# Kindgi's figure beside a peer's, measured in the same run: (Kindgi figure, peer, peer figure).
SIDE_BY_SIDE = [
    ("W1.sqlite.per_call_ms", "langgraph", "W1.per_call_ms_sqlite_sync"),
    ("W1.sqlite.per_call_ms", "langgraph", "W1.per_call_ms_no_persistence"),
    ("W1.postgres.per_call_ms", "langgraph", "W1.per_call_ms_postgres_sync"),
    ("W1.sqlite.per_call_ms", "pydantic-ai", "W1.per_call_ms_in_memory"),
    ("W2.reads.step_ms", "langgraph", "W2.reads_step_ms"),
    ("W2.reads.step_ms", "pydantic-ai", "W2.reads_step_ms"),
    ("W3.services.suspend_p50_ms", "langgraph", "W3.suspend_p50_ms_sqlite"),
    ("W3.services.resume_p50_ms", "langgraph", "W3.resume_p50_ms_sqlite"),
    ("W3.services.suspend_p50_ms", "langgraph", "W3.suspend_p50_ms_sqlite_agent"),
    ("W3.services.resume_p50_ms", "langgraph", "W3.resume_p50_ms_sqlite_agent"),
    ("W3.services.suspend_p50_ms", "pydantic-ai", "W3.suspend_p50_ms_in_memory"),
    ("W3.services.resume_p50_ms", "pydantic-ai", "W3.resume_p50_ms_in_memory"),
]


def side_by_side(results: dict) -> list[dict]:
    """Each comparison both sides measured: the two medians, Kindgi's as a multiple of the
    peer's, and, where a ratio is a target, whether it is met. The ratio is the median of the
    ratios round by round where the run took turns with the peers (``paired_ratios``), and the
    ratio of the two medians where it did not."""
    limits = {(ours, peer, theirs): limit for ours, peer, theirs, limit in RATIO_TARGETS}
    paired = results.get("paired_ratios") or {}
    rows = []
    for ours, peer, theirs in SIDE_BY_SIDE:
        workload, variant, figure = ours.split(".")
        mine = results["workloads"].get(workload, {}).get(variant, {}).get(figure)
        other = (results.get("peers") or {}).get(peer, {}).get(theirs)
        if mine and other:
            by_round = paired.get(f"{ours} / {peer}.{theirs}")
            rows.append(
                {
                    "kindgi": ours,
                    "peer": f"{peer}.{theirs}",
                    "kindgi_median": mine["median"],
                    "peer_median": other["median"],
                    "ratio": by_round["median"] if by_round else round(mine["median"] / other["median"], 2),
                }
            )
            if by_round:
                rows[-1] |= {"ratio_min": by_round["min"], "ratio_max": by_round["max"]}
            limit = limits.get((ours, peer, theirs))
            if limit is not None:
                rows[-1] |= {"target": f"<= {limit}x", "met": rows[-1]["ratio"] <= limit}
    return rows


def _median(results: dict, name: str):
    workload, variant, figure = name.split(".")
    measured = results["workloads"].get(workload, {}).get(variant, {}).get(figure)
    return measured["median"] if isinstance(measured, dict) else None


def verdicts(results: dict) -> list[dict]:
    """Each target with the measured median and whether it is met (None: not measured)."""
    rows = []
    for name, held_to, limit in RELATIVE_TARGETS:
        mine, other = _median(results, name), _median(results, held_to)
        ratio = round(mine / other, 2) if mine and other else None
        rows.append(
            {
                "figure": f"{name} / {held_to}",
                "target": f"<= {limit}" if limit is not None else "",
                "median": ratio,
                "met": None if ratio is None or limit is None else ratio <= limit,
            }
        )
    for workload, variant, figure, comparison, target in TARGETS:
        measured = results["workloads"].get(workload, {}).get(variant, {}).get(figure)
        median = measured["median"] if measured else None
        met = None if median is None else COMPARE[comparison](median, target)
        rows.append(
            {
                "figure": f"{workload}.{variant}.{figure}",
                "target": f"{comparison} {target}",
                "median": median,
                "met": met,
            }
        )
    return rows


def _ratio_to(previous: dict | None, workload: str, variant: str, figure: str, median) -> str:
    """This run's median as a multiple of the previous run's (blank where that had none)."""
    earlier = ((previous or {}).get("workloads", {}).get(workload, {}).get(variant, {}) or {}).get(figure)
    if not isinstance(earlier, dict) or not earlier.get("median") or not isinstance(median, int | float):
        return ""
    return f"{median / earlier['median']:.2f}x"


def machine_line(results: dict, previous: dict | None) -> str:
    """How fast the machine ran the same reference work at the run's start and end, and beside
    the last run's start: a slower machine makes every figure larger, peers' too."""
    reference = results.get("machine", {}).get("reference_ms")
    if not reference:
        return "machine speed: not measured"
    line = f"machine speed: the reference work took {reference['start']} ms at the start"
    if "end" in reference:
        line += f", {reference['end']} ms at the end"
    earlier = ((previous or {}).get("machine") or {}).get("reference_ms")
    if earlier:
        line += f" ({reference['start'] / earlier['start']:.2f}x the last run's {earlier['start']} ms)"
    return line


def print_table(results: dict, *, previous: dict | None = None) -> None:
    """The figures and their targets; with ``previous``, each figure's ratio to that run's."""
    targets = {row["figure"]: row for row in verdicts(results)}
    print(machine_line(results, previous))
    print(f"{'figure':<44} {'median':>10} {'min':>10} {'max':>10} {'vs last':>8}  target")
    for workload, variants in sorted(results["workloads"].items()):
        for variant, figures in variants.items():
            if "error" in figures:
                print(f"{workload}.{variant:<41} failed: {figures['error'].splitlines()[-1][:80]}")
                continue
            for figure, value in figures.items():
                name = f"{workload}.{variant}.{figure}"
                verdict = targets.get(name)
                mark = ""
                if verdict:
                    mark = f"{verdict['target']:<8} {'met' if verdict['met'] else 'MISSED'}"
                ratio = _ratio_to(previous, workload, variant, figure, value["median"])
                spread = f"{value['median']:>10} {value['min']:>10} {value['max']:>10}"
                print(f"{name:<44} {spread} {ratio:>8}  {mark}")
    for row in verdicts(results):
        if " / " in row["figure"] and row["median"] is not None:
            verdict = "" if not row["target"] else "met" if row["met"] else "MISSED"
            print(f"{row['figure']:<64} {row['median']:>8}  {row['target']} {verdict}")
    for name, reason in results.get("skipped", {}).items():
        print(f"{name:<44} skipped: {reason}")
    comparisons = side_by_side(results)
    if comparisons:
        print(
            f"\n{'Kindgi beside a peer':<44} {'kindgi':>10} {'peer':>10} {'ratio':>10} {'by round':>11}"
            "  peer figure"
        )
        for row in comparisons:
            spread = f"{row['ratio_min']}-{row['ratio_max']}" if "ratio_min" in row else ""
            medians = f"{row['kindgi_median']:>10} {row['peer_median']:>10} {row['ratio']:>10} {spread:>11}"
            mark = f"  {row['target']} {'met' if row['met'] else 'MISSED'}" if "target" in row else ""
            print(f"{row['kindgi']:<44} {medians}  {row['peer']}{mark}")
    peers = results.get("peers") or {}
    if peers:
        print(f"\n{'peer figure (same machine, same run)':<44} {'median':>10} {'min':>10} {'max':>10}")
        for peer, figures in peers.items():
            if "error" in figures:
                print(f"{peer:<44} not measured: {figures['error']}")
                continue
            for figure, value in figures.items():
                print(
                    f"{peer + '.' + figure:<44} {value['median']:>10} {value['min']:>10} {value['max']:>10}"
                )
