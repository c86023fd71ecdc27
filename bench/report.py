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
    ("W3", "http", "suspend_p50_ms", "<=", 15),
    ("W3", "http", "resume_p50_ms", "<=", 15),
    ("W4", "sqlite", "api_p95_ms_at_10000", "<", 50),
    ("W4", "sqlite", "console_p95_ms_at_10000", "<", 50),
    ("W4", "sqlite", "api_query_growth", "<=", 0),
    ("W4", "sqlite", "console_query_growth", "<=", 0),
    ("W5", "redis", "p95_ms", "<", 50),
    ("W6", "postgres", "speedup", ">=", 1.7),
]
COMPARE = {"<=": operator.le, "<": operator.lt, ">=": operator.ge}

# Kindgi's figure beside a peer's, measured in the same run: (Kindgi figure, peer, peer figure).
SIDE_BY_SIDE = [
    ("W1.sqlite.per_call_ms", "langgraph", "W1.per_call_ms_sqlite_sync"),
    ("W1.sqlite.per_call_ms", "langgraph", "W1.per_call_ms_no_persistence"),
    ("W1.sqlite.per_call_ms", "pydantic-ai", "W1.per_call_ms_in_memory"),
    ("W2.reads.step_ms", "langgraph", "W2.reads_step_ms"),
    ("W2.reads.step_ms", "pydantic-ai", "W2.reads_step_ms"),
    ("W3.services.suspend_p50_ms", "langgraph", "W3.suspend_p50_ms_sqlite"),
    ("W3.services.resume_p50_ms", "langgraph", "W3.resume_p50_ms_sqlite"),
    ("W3.services.suspend_p50_ms", "pydantic-ai", "W3.suspend_p50_ms_in_memory"),
    ("W3.services.resume_p50_ms", "pydantic-ai", "W3.resume_p50_ms_in_memory"),
]


def side_by_side(results: dict) -> list[dict]:
    """Each comparison both sides measured: the two medians, and Kindgi's as a multiple of the peer's."""
    rows = []
    for ours, peer, theirs in SIDE_BY_SIDE:
        workload, variant, figure = ours.split(".")
        mine = results["workloads"].get(workload, {}).get(variant, {}).get(figure)
        other = (results.get("peers") or {}).get(peer, {}).get(theirs)
        if mine and other:
            rows.append(
                {
                    "kindgi": ours,
                    "peer": f"{peer}.{theirs}",
                    "kindgi_median": mine["median"],
                    "peer_median": other["median"],
                    "ratio": round(mine["median"] / other["median"], 2),
                }
            )
    return rows


def verdicts(results: dict) -> list[dict]:
    """Each target with the measured median and whether it is met (None: not measured)."""
    rows = []
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


def print_table(results: dict) -> None:
    targets = {row["figure"]: row for row in verdicts(results)}
    print(f"{'figure':<44} {'median':>10} {'min':>10} {'max':>10}  target")
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
                print(f"{name:<44} {value['median']:>10} {value['min']:>10} {value['max']:>10}  {mark}")
    for name, reason in results.get("skipped", {}).items():
        print(f"{name:<44} skipped: {reason}")
    comparisons = side_by_side(results)
    if comparisons:
        print(f"\n{'Kindgi beside a peer':<44} {'kindgi':>10} {'peer':>10} {'ratio':>10}  peer figure")
        for row in comparisons:
            medians = f"{row['kindgi_median']:>10} {row['peer_median']:>10} {row['ratio']:>10}"
            print(f"{row['kindgi']:<44} {medians}  {row['peer']}")
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
