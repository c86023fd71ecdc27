"""W0, the floor: what the disk allows for the rows Kindgi's design writes, with the commits it
needs, written with bare ``sqlite3`` and ``psycopg`` statements (no Django, no ORM, no engine)
on tables shaped like Kindgi's: a run row with JSON columns, a journal keyed by run and
sequence with a JSON payload, an approval, a decision chained to its tenant's head.

Kindgi's figures are printed as multiples of these (``bench.report.RELATIVE_TARGETS``), so a
figure reads as "how far from what the disk allows", on the machine and in the run it was
measured in. The writes, by what Kindgi does today:

- a W1 call to a read-only idempotent tool: one commit, the run's UPDATE and three entries
  (the model's reply, the call, its result);
- a W3 suspend: two commits, the run and its first entry; then the approval, the run's UPDATE
  and two entries (the model's reply, the wait);
- a W3 resume: four commits, the decision with the wait's end and the run claimed (an entry,
  the run's UPDATE, the decision, the chain head, the approval); the call's intent; its result;
  the run's end with the model's answer (each the run's UPDATE and its entries).
"""

import json
import os
import sqlite3
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench.stats import percentile, summary

REPETITIONS = 5

# Foreign keys checked when the transaction commits, as Django makes them.
LATER = "DEFERRABLE INITIALLY DEFERRED"
TABLES = [
    """CREATE TABLE run (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, status TEXT NOT NULL,
       input {json} NOT NULL, output {json}, waitpoint {json}, last_sequence INTEGER NOT NULL,
       claim_token TEXT NOT NULL, claim_expires_at {time}, updated_at {time} NOT NULL,
       finished_at {time})""",
    f"""CREATE TABLE entry (id {{serial}}, run_id TEXT NOT NULL REFERENCES run (id) {LATER},
       sequence INTEGER NOT NULL, kind TEXT NOT NULL, node_id TEXT NOT NULL,
       created_at {{time}} NOT NULL, duration_ms INTEGER, payload {{json}} NOT NULL,
       UNIQUE (run_id, sequence))""",
    f"""CREATE TABLE approval (id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES run (id) {LATER},
       status TEXT NOT NULL, arguments {{json}} NOT NULL, gate {{json}} NOT NULL, decided_at {{time}},
       decision_id INTEGER)""",
    f"""CREATE TABLE decision (id {{serial}},
       approval_id TEXT NOT NULL REFERENCES approval (id) {LATER},
       sequence INTEGER NOT NULL, previous_hash TEXT NOT NULL, hash TEXT NOT NULL,
       decision TEXT NOT NULL, rationale TEXT NOT NULL, decided_at {{time}} NOT NULL)""",
    "CREATE TABLE chain_head (id INTEGER PRIMARY KEY, sequence INTEGER NOT NULL, hash TEXT NOT NULL)",
]

ARGUMENTS = {"message": "All systems go."}
GATE = {"gate": "ask", "reason": "rule status posts: always_ask", "requiredRole": "standard"}
REPLY = {"model": "scripted:bench", "step": 1, "attempt": 1, "text": "", "usage": {"inputTokens": 0}}
CALL = {"callId": "c1", "toolId": "acme-ops.post-update", "toolVersion": "1.0.0", "arguments": ARGUMENTS}


class Floor:
    """One database's connection and its dialect: ``?`` or ``%s``, and how it writes JSON."""

    def __init__(
        self, connect: Callable[[], object], *, marker: str, json_type: str, time_type: str, serial: str
    ):
        self.db = connect()
        self.marker = marker
        for table in TABLES:
            self.execute(table.format(json=json_type, time=time_type, serial=serial))
        self.execute("INSERT INTO chain_head (id, sequence, hash) VALUES (1, 0, 'sha256:0')")
        self.commit()

    def execute(self, sql: str, params: tuple = ()) -> list:
        cursor = self.db.cursor()
        cursor.execute(sql.replace("?", self.marker), params)
        return cursor.fetchall() if cursor.description else []

    def commit(self) -> None:
        self.db.commit()

    # The rows

    def new_run(self, status: str = "running") -> str:
        run_id, now = uuid.uuid4().hex, _now()
        self.execute(
            "INSERT INTO entry (run_id, sequence, kind, node_id, created_at, payload) "
            "VALUES (?, 1, ?, '', ?, ?)",
            (run_id, "run.started", now, json.dumps({"input": {"userMessage": "go"}, "dryRun": False})),
        )
        self.execute(
            "INSERT INTO run (id, tenant_id, status, input, last_sequence, claim_token, claim_expires_at, "
            "updated_at) VALUES (?, 't', ?, ?, 1, 'token', ?, ?)",
            (run_id, status, json.dumps({"userMessage": "go"}), now, now),
        )
        return run_id

    def step(self, run_id: str, entries: list[tuple[str, dict]], **values) -> None:
        """The run's UPDATE that checks the claim and moves its sequence, then its entries."""
        now = _now()
        names = ["claim_expires_at", "updated_at", *values]
        assignments = ", ".join(f"{name} = ?" for name in names)
        (sequence,) = self.execute(
            f"UPDATE run SET last_sequence = last_sequence + ?, {assignments} "
            "WHERE id = ? AND claim_token = 'token' RETURNING last_sequence",
            (len(entries), now, now, *values.values(), run_id),
        )[0]
        first = sequence - len(entries) + 1
        rows = ", ".join(["(?, ?, ?, '', ?, ?)"] * len(entries))
        params = []
        for place, (kind, payload) in enumerate(entries):
            params += [run_id, first + place, kind, now, json.dumps(payload)]
        self.execute(
            f"INSERT INTO entry (run_id, sequence, kind, node_id, created_at, payload) VALUES {rows}",
            tuple(params),
        )

    def decide(self, run_id: str, approval_id: str) -> None:
        now = _now()
        self.step(run_id, [("wait.resumed", {"resolution": {"decision": "approve"}})], waitpoint=None)
        sequence, previous = self.execute("SELECT sequence, hash FROM chain_head WHERE id = 1")[0]
        digest = f"sha256:{uuid.uuid4().hex}"
        (decision_id,) = self.execute(
            "INSERT INTO decision (approval_id, sequence, previous_hash, hash, decision, rationale, "
            "decided_at) VALUES (?, ?, ?, ?, 'approve', '', ?) RETURNING id",
            (approval_id, sequence + 1, previous, digest, now),
        )[0]
        self.execute("UPDATE chain_head SET sequence = ?, hash = ? WHERE id = 1", (sequence + 1, digest))
        self.execute(
            "UPDATE approval SET status = 'approved', decided_at = ?, decision_id = ? WHERE id = ?",
            (now, decision_id, approval_id),
        )


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _sqlite(path: Path) -> Floor:
    def connect():
        db = sqlite3.connect(path, isolation_level=None)
        # As Kindgi's settings have it: write-ahead log, synchronous NORMAL, writers wait.
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")  # checked, as Django has them, when a commit is made
        db.isolation_level = "IMMEDIATE"
        return db

    return Floor(connect, marker="?", json_type="TEXT", time_type="TEXT", serial="INTEGER PRIMARY KEY")


def _postgres(url: str) -> Floor:
    import psycopg

    return Floor(
        lambda: psycopg.connect(url),
        marker="%s",
        json_type="jsonb",
        time_type="timestamptz",
        serial="bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
    )


def _w1_call_ms(floor: Floor, calls: int) -> float:
    run_id = floor.new_run()
    floor.commit()
    began = time.perf_counter()
    for number in range(calls):
        call = {**CALL, "callId": f"c{number}", "toolId": "bench.noop", "arguments": {"step": number}}
        floor.step(
            run_id, [("model.called", REPLY), ("tool.called", call), ("tool.completed", {"result": {}})]
        )
        floor.commit()
    return (time.perf_counter() - began) * 1000 / calls


def _suspend(floor: Floor) -> tuple[float, str, str]:
    began = time.perf_counter()
    run_id = floor.new_run()
    floor.commit()
    approval_id = uuid.uuid4().hex
    floor.execute(
        "INSERT INTO approval (id, run_id, status, arguments, gate) VALUES (?, ?, 'pending', ?, ?)",
        (approval_id, run_id, json.dumps(ARGUMENTS), json.dumps(GATE)),
    )
    waitpoint = {"kind": "approval", "approvalId": approval_id, **CALL}
    floor.step(
        run_id,
        [("model.called", REPLY), ("wait.suspended", {"waitpoint": waitpoint})],
        status="suspended",
        waitpoint=json.dumps(waitpoint),
    )
    floor.commit()
    return (time.perf_counter() - began) * 1000, run_id, approval_id


def _resume(floor: Floor, run_id: str, approval_id: str) -> float:
    began = time.perf_counter()
    floor.decide(run_id, approval_id)
    floor.commit()
    floor.step(run_id, [("tool.called", CALL)])
    floor.commit()
    floor.step(run_id, [("tool.completed", {"result": {"posted": True}})])
    floor.commit()
    output = json.dumps({"reply": "Posted."})
    floor.step(
        run_id,
        [("model.called", REPLY), ("run.completed", {"output": {"reply": "Posted."}})],
        status="completed",
        output=output,
        finished_at=_now(),
    )
    floor.commit()
    return (time.perf_counter() - began) * 1000


def _figures(floor: Floor, quick: bool) -> dict:
    calls, cycles = (50, 10) if quick else (200, 40)
    _w1_call_ms(floor, 5)  # warm up
    w1, suspends, resumes = [], [], []
    for _ in range(REPETITIONS):
        w1.append(_w1_call_ms(floor, calls))
        rounds = [_suspend(floor) for _ in range(cycles)]
        suspends.append(percentile([elapsed for elapsed, _, _ in rounds], 0.5))
        resumes.append(
            percentile([_resume(floor, run_id, approval_id) for _, run_id, approval_id in rounds], 0.5)
        )
    return {
        "w1_call_ms": summary(w1),
        "w3_suspend_ms": summary(suspends),
        "w3_resume_ms": summary(resumes),
    }


def floor_sqlite(quick: bool) -> dict:
    path = Path(os.environ["KINDGI_SQLITE_PATH"]).with_name("floor.sqlite3")
    return _figures(_sqlite(path), quick)


def floor_postgres(quick: bool) -> dict:
    return _figures(_postgres(os.environ["DATABASE_URL"]), quick)
