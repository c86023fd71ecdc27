"""The approval cycle's writes: what a suspension and a resume cost the database, and that the
cheaper end of a run still refuses to write once its claim is gone."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from approvals.actions.decisions import check_complete_approval
from approvals.models import Approval
from runs import executor
from runs.actions import check_start_run, do_cancel_run
from runs.models import Run, RunStatus
from tests.factories import default_tenant, principal, reviewer
from tests.pack_fixtures.probes import SCRIPT

from .helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)


# PostgreSQL writes a step's UPDATE of the run and INSERT of its entries in one statement.
STEP_IN_ONE_STATEMENT = connection.vendor == "postgresql"


def statements(captured: CaptureQueriesContext) -> list[str]:
    """What was sent, without the transactions' own (SQLite sends BEGIN and COMMIT through the
    cursor, PostgreSQL does not)."""
    return [
        query["sql"]
        for query in captured.captured_queries
        if not query["sql"].startswith(("BEGIN", "COMMIT"))
    ]


def reads_of_the_run(sql: list[str]) -> list[str]:
    """Statements that read the run, alone or joined to what else they read."""
    return [statement for statement in sql if statement.startswith("SELECT") and '"runs_run"' in statement]


def gated_write() -> None:
    SCRIPT.replies = [calls(("w", "probe.write", {"label": "w", "pause_ms": 0})), answer("written")]


def start_gated(tenant, on_behalf_of=None) -> Run:
    return check_start_run(
        tenant=tenant,
        principal=on_behalf_of or principal(tenant),
        agent_id="probe.gated",
        input={"userMessage": "go"},
    )


def test_a_suspension_writes_the_run_once_and_never_reads_it_back():
    tenant = default_tenant()
    pat = principal(tenant)  # as a request's user, or a schedule's owner: read with what it starts
    gated_write()
    start_gated(tenant, pat)  # the catalog and the tenant's rules, read once per process
    gated_write()
    with CaptureQueriesContext(connection) as captured:
        run = start_gated(tenant, pat)
    assert run.status == RunStatus.SUSPENDED
    sql = statements(captured)
    # The tenant's configuration version; run.started; the run; the approval; the run's end,
    # claim checked in its UPDATE; wait.suspended (with the model's step), in the same
    # statement as the UPDATE where the database writes both in one.
    assert len(sql) == (5 if STEP_IN_ONE_STATEMENT else 6), "\n".join(sql)
    assert reads_of_the_run(sql) == []
    assert sum('UPDATE "runs_run"' in statement for statement in sql) == 1


def test_a_resume_ends_the_run_with_one_claimed_update():
    tenant = default_tenant()
    ada = reviewer("ada", role="admin", tenant=tenant)
    gated_write()
    run = start_gated(tenant)
    approval = Approval.objects.get(run=run)
    with CaptureQueriesContext(connection) as captured:
        check_complete_approval(approval_id=approval.pk, acting_user=ada, decision="approve")
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    sql = statements(captured)
    # The run's end: its UPDATE, then its entries (one statement where the database writes both).
    if STEP_IN_ONE_STATEMENT:
        assert sql[-1].startswith('WITH advanced AS (UPDATE "runs_run"'), sql[-1]
        assert 'INSERT INTO "runs_journalentry"' in sql[-1]
    else:
        assert sql[-2].startswith('UPDATE "runs_run"'), sql[-2]
        assert sql[-1].startswith('INSERT INTO "runs_journalentry"')
    assert "RETURNING" in sql[-1 if STEP_IN_ONE_STATEMENT else -2]
    # The one read of the run is the decision's, which locks it.
    assert len(reads_of_the_run(sql)) == 1, "\n".join(reads_of_the_run(sql))
    # Before the resume is written: the run and the approval (one statement where SQLite's
    # write lock covers both; locked one after the other elsewhere), and the reviewer.
    reads = sql[: next(index for index, statement in enumerate(sql) if statement.startswith("INSERT"))]
    assert len(reads) == (3 if connection.features.has_select_for_update else 2), "\n".join(reads)
    # The decision comes last, after the resume: from the read of its tenant's decisions head
    # (which it locks, where rows are locked one by one) to the commit, the tenant's other
    # deciders wait, so only the decision, the head moved to it and its approval's row follow.
    head = next(index for index, statement in enumerate(sql) if 'FROM "audit_chainhead"' in statement)
    assert not any('FROM "approvals_decision"' in statement for statement in sql)
    if connection.features.has_select_for_update:
        assert "FOR UPDATE" in sql[head]
    assert 'INSERT INTO "runs_journalentry"' in "\n".join(sql[:head])
    assert sql[head + 1].startswith('INSERT INTO "approvals_decision"'), sql[head + 1]
    assert sql[head + 2].startswith('UPDATE "audit_chainhead"'), sql[head + 2]
    assert sql[head + 3].startswith('UPDATE "approvals_approval"'), sql[head + 3]


def test_a_run_cancelled_before_its_suspension_is_written_keeps_no_approval(monkeypatch):
    """The end is worked out before the claimed UPDATE: if that finds the claim gone, the
    approval it made goes back with the rest of the transaction."""
    real_engine = executor._engine_for

    def engine_cancelled_on_the_way_to_wait(run, recorder, known):
        engine = real_engine(run, recorder, known)
        real_execute = engine.execute

        def execute():
            outcome = real_execute()
            do_cancel_run(run.pk, reason="changed my mind")
            return outcome

        engine.execute = execute
        return engine

    monkeypatch.setattr(executor, "_engine_for", engine_cancelled_on_the_way_to_wait)
    gated_write()
    run = start("probe.gated")
    assert run.status == RunStatus.CANCELLED
    assert not Approval.objects.filter(run=run).exists()
    kinds = list(Run.objects.get(pk=run.pk).journal.values_list("kind", flat=True))
    assert "wait.suspended" not in kinds
    assert kinds[-1] == "run.cancelled"
