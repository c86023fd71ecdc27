"""`python -m bench`: run the workloads, print the table, write the JSON.

    python -m bench                                   # everything (make bench)
    python -m bench --only W1,W2 --quick --json out.json

Each workload variant runs in its own process on a fresh database: a new SQLite file, or a
new PostgreSQL database when PostgreSQL answers (variants that need PostgreSQL or Redis are
left out, with the reason, when they do not).
"""

import argparse
import base64
import datetime
import json
import os
import platform
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.report import SIDE_BY_SIDE, print_table, side_by_side, verdicts
from bench.servers import ROOT
from bench.stats import summary

POSTGRES = os.environ.get("KINDGI_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432")
REDIS = os.environ.get("KINDGI_BENCH_REDIS", "redis://127.0.0.1:6379/9")

# The workloads the peers (bench/peers.py) do the same work as.
PEERS_OF = ("W1", "W2", "W3")
# The variants set beside a peer's figure; these run in rounds that alternate with the peers'.
PEERED = {tuple(ours.split(".")[:2]) for ours, _, _ in SIDE_BY_SIDE}
ROUNDS = 5

# (workload, variant, what it needs beyond SQLite, the tasks backend)
VARIANTS = [
    ("W0", "sqlite", None, "immediate"),
    ("W0", "postgres", "postgres", "immediate"),
    ("W1", "sqlite", None, "immediate"),
    ("W1", "postgres", "postgres", "immediate"),
    ("W2", "reads", None, "immediate"),
    ("W2", "writes", None, "immediate"),
    ("W3", "services", None, "immediate"),
    ("W3", "http", None, "immediate"),
    ("W4", "sqlite", None, "immediate"),
    ("W5", "redis", "redis", "immediate"),
    ("W6", "postgres", "postgres", "db"),
    ("W7", "cluster", "postgres+redis", "db"),
    ("W7", "cluster-rq", "postgres+redis", "rq"),
    ("W8", "sqlite", None, "immediate"),
]


def _answers(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=2).close()
        return True
    except OSError:
        return False


def _fresh_postgres_database() -> str:
    import psycopg

    name = f"kindgi_bench_{os.getpid()}"
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.execute(f"CREATE DATABASE {name}")
    return f"{POSTGRES}/{name}"


def _drop_postgres_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    with psycopg.connect(f"{POSTGRES}/postgres", autocommit=True) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _environment(needs: str | None, tasks: str, folder: Path) -> dict[str, str]:
    """Production settings (no DEBUG: no query log, JSON logs) over plain HTTP on 127.0.0.1."""
    environment = os.environ | {
        "DJANGO_SETTINGS_MODULE": "kindgi_site.settings",
        "KINDGI_DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(48),
        "KINDGI_ENCRYPTION_KEY": base64.urlsafe_b64encode(secrets.token_bytes(32)).decode(),
        "KINDGI_SSL_REDIRECT": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "KINDGI_PACKS": "packs.my_pack,packs.acme_ops,bench.pack",
        "KINDGI_TASKS": tasks,
        "KINDGI_MAX_MODEL_STEPS": "1000",
        "KINDGI_SQLITE_PATH": str(folder / "bench.sqlite3"),
    }
    environment.pop("DATABASE_URL", None)
    environment.pop("REDIS_URL", None)
    if needs in ("postgres", "postgres+redis"):
        environment["DATABASE_URL"] = _fresh_postgres_database()
    if needs in ("redis", "postgres+redis"):
        environment["REDIS_URL"] = REDIS
    return environment


def _run_variant(
    workload: str, variant: str, needs: str | None, tasks: str, quick: bool, repetitions: int | None = None
) -> dict:
    options = (["--quick"] if quick else []) + (["--repetitions", str(repetitions)] if repetitions else [])
    with tempfile.TemporaryDirectory(prefix="kindgi-bench-") as folder:
        environment = _environment(needs, tasks, Path(folder))
        log = Path(folder) / "stderr.log"
        try:
            with log.open("w") as errors:
                result = subprocess.run(
                    [sys.executable, "-m", "bench.run", workload, variant, *options],
                    cwd=ROOT,
                    env=environment,
                    stdout=subprocess.PIPE,
                    stderr=errors,
                    text=True,
                    timeout=900,
                )
            if result.returncode != 0:
                tail = log.read_text()[-1500:]
                return {"error": f"exit {result.returncode}: {tail}"}
            return json.loads(result.stdout.strip().splitlines()[-1])
        finally:
            if "DATABASE_URL" in environment:
                _drop_postgres_database(environment["DATABASE_URL"])


def merge_rounds(rounds: list[dict]) -> dict:
    """One figure from the rounds' figures: the median, min and max of the rounds' medians (each
    round is one repetition). A failed round fails the whole."""
    for figures in rounds:
        if "error" in figures:
            return figures
    names = [name for name in rounds[0] if all(name in figures for figures in rounds)]
    return {name: summary([figures[name]["median"] for figures in rounds]) for name in names}


def paired_ratios(workload: str, ours_by_round: dict[str, list[dict]], peers_by_round: list[dict]) -> dict:
    """Kindgi's figure over a peer's, round by round, for the comparisons of this workload: each
    ratio is of two figures taken seconds apart, so a machine whose speed moves within minutes
    moves both sides of it."""
    paired = {}
    for ours, peer, theirs in SIDE_BY_SIDE:
        ours_workload, variant, figure = ours.split(".")
        if ours_workload != workload or variant not in ours_by_round:
            continue
        ratios = []
        for mine, others in zip(ours_by_round[variant], peers_by_round, strict=True):
            kindgi = (mine.get(figure) or {}).get("median")
            other = (others.get(peer, {}).get(theirs) or {}).get("median")
            if kindgi and other:
                ratios.append(kindgi / other)
        if ratios:
            paired[f"{ours} / {peer}.{theirs}"] = summary(ratios, digits=2)
    return paired


def _measure_in_rounds(
    workload: str, variants: list[tuple], quick: bool
) -> tuple[dict[str, dict], list[dict], dict]:
    """Kindgi's peered variants and the peers, one repetition each, in turn, ROUNDS times: the
    figures of each side, and each comparison's ratio round by round."""
    from bench.peers import measure_peers

    ours_by_round: dict[str, list[dict]] = {variant: [] for _, variant, _, _ in variants}
    peers_by_round: list[dict] = []
    for round_number in range(1, ROUNDS + 1):
        for _, variant, needs, tasks in variants:
            print(f"{workload} {variant}, round {round_number} of {ROUNDS} …", file=sys.stderr, flush=True)
            ours_by_round[variant].append(_run_variant(workload, variant, needs, tasks, quick, repetitions=1))
        print(f"peers, {workload}, round {round_number} of {ROUNDS} …", file=sys.stderr, flush=True)
        peers_by_round.append(measure_peers({workload}, quick=quick, repetitions=1))
    ours = {variant: merge_rounds(rounds) for variant, rounds in ours_by_round.items()}
    return ours, peers_by_round, paired_ratios(workload, ours_by_round, peers_by_round)


def _merge_peers(peers_by_round: list[dict]) -> dict[str, dict]:
    """Each peer's figures over the rounds it was measured in; a peer that failed every round
    says why."""
    merged = {}
    for peer in dict.fromkeys(name for peers in peers_by_round for name in peers):
        measured = [peers[peer] for peers in peers_by_round if "error" not in peers.get(peer, {"error": ""})]
        if measured:
            merged[peer] = merge_rounds(measured)
        else:
            merged[peer] = next(peers[peer] for peers in peers_by_round if peer in peers)
    return merged


def reference_ms() -> float:
    """The same pure-Python work every run, timed (the median of five, in ms): how fast the
    machine runs the interpreter at that moment. The machines this runs on differ, and one
    machine's speed moves within minutes; a figure's "vs last" means little without it."""
    import statistics

    def work() -> float:
        began = time.perf_counter()
        total = 0
        for number in range(1_000_000):
            total += number % 7
        json.dumps({str(key): [key, str(key)] for key in range(20_000)})
        return (time.perf_counter() - began) * 1000

    return round(statistics.median(work() for _ in range(5)), 1)


def previous_results(folder: Path) -> tuple[Path, dict] | None:
    """The newest earlier run's results (not a chaos run's), to set each figure beside: by the
    date each run wrote in its file, since a checkout gives every file the same mtime."""
    earlier = []
    for path in folder.glob("*.json"):
        if path.name.startswith("chaos-"):
            continue
        try:
            results = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(results, dict):
            earlier.append((str(results.get("date", "")), path.stat().st_mtime, path.name, path, results))
    if not earlier:
        return None
    *_, path, results = max(earlier)
    return path, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="comma-separated workloads, e.g. W1,W2 (default: all)")
    parser.add_argument("--quick", action="store_true", help="smaller repetitions (still five of each)")
    parser.add_argument(
        "--json", type=Path, help="where to write the results (default: bench/results/<date>.json)"
    )
    parser.add_argument("--no-peers", action="store_true", help="leave out the peer frameworks' figures")
    args = parser.parse_args(argv)

    chosen = (
        {name.strip().upper() for name in args.only.split(",")} if args.only else {v[0] for v in VARIANTS}
    )
    unknown = chosen - {v[0] for v in VARIANTS}
    if unknown:
        known = ", ".join(sorted({v[0] for v in VARIANTS}))
        parser.error(f"no workload {', '.join(sorted(unknown))} (there are {known})")
    available = {"postgres": _answers("127.0.0.1", 5432), "redis": _answers("127.0.0.1", 6379), None: True}
    available["postgres+redis"] = available["postgres"] and available["redis"]

    started = time.monotonic()
    results: dict = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "reference_ms": {"start": reference_ms()},
        },
        "quick": args.quick,
        "workloads": {},
        "skipped": {},
    }
    peers: dict = {}
    errors: dict[str, str] = {}
    paired: dict = {}
    for workload in dict.fromkeys(v[0] for v in VARIANTS):
        if workload not in chosen:
            continue
        in_rounds = []
        for variant_of in (v for v in VARIANTS if v[0] == workload):
            _, variant, needs, tasks = variant_of
            if not available[needs]:
                results["skipped"][f"{workload}.{variant}"] = f"needs {needs}, which does not answer"
            elif not args.no_peers and (workload, variant) in PEERED:
                in_rounds.append(variant_of)
            else:
                print(f"{workload} {variant} …", file=sys.stderr, flush=True)
                results["workloads"].setdefault(workload, {})[variant] = _run_variant(
                    workload, variant, needs, tasks, args.quick
                )
        if args.no_peers or workload not in PEERS_OF:
            continue
        # The machine's speed moves by a third within a minute (machine.reference_ms), and a
        # ratio with it: so Kindgi and its peers take turns, and each ratio is round by round.
        ours, peers_by_round, paired[workload] = _measure_in_rounds(workload, in_rounds, args.quick)
        measured = results["workloads"].setdefault(workload, {}) | ours
        results["workloads"][workload] = {
            v: measured[v] for w, v, _, _ in VARIANTS if v in measured and w == workload
        }
        for peer, figures in _merge_peers(peers_by_round).items():
            if "error" in figures:
                print(f"{peer}, {workload}: {figures['error']}", file=sys.stderr, flush=True)
                errors.setdefault(peer, figures["error"])
            else:
                peers.setdefault(peer, {}).update(figures)
    if not args.no_peers:
        # A peer not measured at all says why; one measured for some workloads keeps those.
        unmeasured = {peer: {"error": error} for peer, error in errors.items() if peer not in peers}
        results["peers"] = peers | unmeasured
        results["paired_ratios"] = {
            name: ratio for ratios in paired.values() for name, ratio in ratios.items()
        }
    results["machine"]["reference_ms"]["end"] = reference_ms()
    results["targets"] = verdicts(results)
    results["side_by_side"] = side_by_side(results)
    results["seconds"] = round(time.monotonic() - started, 1)

    folder = ROOT / "bench" / "results"
    previous = previous_results(folder)
    if previous is not None:
        results["previous"] = previous[0].name
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H-%M-%S")
    path = args.json or folder / f"{stamp}.json"  # each run its own file, beside the earlier ones
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(results, indent=2) + "\n")
    print_table(results, previous=previous[1] if previous else None)
    print(f"\nwritten to {path} ({results['seconds']} s)")
    failed = [
        f"{w}.{v}"
        for w, variants in results["workloads"].items()
        for v, f in variants.items()
        if "error" in f
    ]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
