"""Executing a run exactly once: claims, repeated deliveries, interruptions, gapless journals."""

import threading
from datetime import timedelta
from uuid import uuid4

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from packs.acme_ops.status_page import STATUS_PAGE
from runs.engine.entries import Entry
from runs.exceptions import LostClaimError
from runs.executor import execute
from runs.journal import do_claim_run, do_record
from runs.models import JournalEntry, Run, RunStatus
from runs.tasks import execute_run
from tests.factories import default_tenant, principal
from tests.pack_fixtures.probes import SCRIPT, TIMELINE

from .decide import decide
from .helpers import answer, calls, start

pytestmark = pytest.mark.django_db(transaction=True)


def journal_of(run):
    return list(run.journal.values_list("sequence", "kind"))


def test_delivering_start_and_resume_again_changes_nothing():
    run = start("acme-ops.status-agent", "Up again.")
    execute_run.enqueue(str(run.pk))  # a second delivery of the start task
    assert Run.objects.get(pk=run.pk).last_sequence == run.last_sequence
    run = decide(run, "call_post_update")
    finished = journal_of(run)
    execute_run.enqueue(str(run.pk))  # a second delivery of the resume task
    execute(run.pk)
    assert journal_of(run) == finished
    assert len(STATUS_PAGE.posts) == 1  # the tool's side effect, counted once


def stalled_run(
    *,
    status=RunStatus.RUNNING,
    claim_expires_in=timedelta(minutes=5),
    messages=(),
    journal=(),
    agent_key="probe.free",
):
    """A run as an executor left it: claimed, with some of its steps journaled."""
    run = Run.objects.create(
        tenant=default_tenant(),
        flow_key="agent.turn",
        flow_version="1.1.0",
        agent_key=agent_key,
        agent_version="1.0.0",
        input={"userMessage": "go"},
        status=status,
        claim_token="someone-else",
        claim_expires_at=timezone.now() + claim_expires_in,
        messages=list(messages),
    )
    for index, (kind, payload) in enumerate(journal, start=1):
        JournalEntry.objects.create(run=run, sequence=index, kind=kind, payload=payload)
    Run.objects.filter(pk=run.pk).update(last_sequence=len(journal))
    return run


def test_a_run_held_by_another_executor_is_left_alone():
    run = stalled_run()
    execute(run.pk)
    run.refresh_from_db()
    assert (run.status, run.claim_token, run.last_sequence) == (RunStatus.RUNNING, "someone-else", 0)
    assert SCRIPT.requests == []


def test_a_run_whose_claim_expired_is_taken_over_and_continued():
    SCRIPT.replies = [answer("recovered")]
    run = stalled_run(claim_expires_in=timedelta(minutes=-1))
    execute(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert run.output == {"reply": "recovered"}


PENDING_WRITE = [
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "content": "",
        "toolCalls": [{"id": "w", "toolId": "probe.write", "arguments": {"label": "w"}}],
    },
]
PENDING_IDEMPOTENT_WRITE = [
    {"role": "user", "content": "go"},
    {
        "role": "assistant",
        "content": "",
        "toolCalls": [{"id": "w", "toolId": "probe.idempotent-write", "arguments": {"label": "w"}}],
    },
]


def interrupted_write():
    return stalled_run(
        claim_expires_in=timedelta(minutes=-1),
        messages=PENDING_WRITE,
        journal=[
            ("run.started", {}),
            ("model.called", {}),
            ("tool.called", {"callId": "w", "toolId": "probe.write"}),
        ],
    )


def test_an_interrupted_call_to_a_tool_that_is_not_idempotent_waits_for_a_person():
    run = interrupted_write()
    execute(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED
    approval = run.approvals.get()
    assert (approval.subject_kind, approval.title) == (
        "tool-call:interrupted",
        "Interrupted call: probe.write",
    )
    assert approval.gate["reason"].startswith("recovery: the call started but its result was never recorded")
    assert TIMELINE.calls("w") == 0


def test_rejecting_the_recovery_tells_the_model_and_never_repeats_the_call():
    SCRIPT.replies = [answer("I could not confirm the write.")]
    run = interrupted_write()
    execute(run.pk)
    run = decide(Run.objects.get(pk=run.pk), "w", "reject", "it probably went through")
    assert run.status == RunStatus.COMPLETED
    result = next(m["content"] for m in run.messages if m.get("callId") == "w")
    assert result["error"]["code"] == "TOOL_INTERRUPTED"
    # Nobody knows whether it took effect: the model is not told that nothing changed.
    assert result["stateChanged"] is None
    assert "whether it took effect is unknown" in result["error"]["message"]
    assert TIMELINE.calls("w") == 0


def test_approving_the_recovery_runs_the_call_again():
    SCRIPT.replies = [answer("Written.")]
    run = interrupted_write()
    execute(run.pk)
    run = decide(Run.objects.get(pk=run.pk), "w")
    assert run.status == RunStatus.COMPLETED
    assert TIMELINE.calls("w") == 1


class WorkerDied(BaseException):
    """What the executor's process dying looks like from inside it: nothing catches it, nothing
    after it is recorded (as a SIGKILL would leave things)."""


@pytest.fixture
def dies_after_paying(monkeypatch):
    """The payment is made, then the worker dies before its result is recorded (once)."""
    from tests.pack_fixtures.probes import LEDGER

    class Ledger(list):
        died = False

        def append(self, payment):
            super().append(payment)
            if not Ledger.died:
                Ledger.died = True
                raise WorkerDied

    monkeypatch.setattr(LEDGER, "payments", Ledger())
    return LEDGER


def interrupted_after_approval(run, *approvers):
    """Have ``approvers`` approve ``run``'s waiting payment: it runs and the worker dies mid-call;
    then the sweep's executor takes the run over once the dead one's claim expired. The
    approval made to repeat the call."""
    from approvals.actions.decisions import check_complete_approval

    approval = run.approvals.get()
    *first, last = approvers
    for user in first:
        check_complete_approval(approval_id=approval.pk, acting_user=user, decision="approve")
    with pytest.raises(WorkerDied):
        check_complete_approval(approval_id=approval.pk, acting_user=last, decision="approve")
    assert Run.objects.get(pk=run.pk).status == RunStatus.RUNNING  # the dead worker's claim
    Run.objects.filter(pk=run.pk).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    execute(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.SUSPENDED
    return run.approvals.get(subject_kind="tool-call:interrupted")


class TestRepeatingAnInterruptedCall:
    """The approval to repeat a call needs at least what the call needed to run."""

    def test_it_needs_the_role_the_named_reviewers_and_the_approvals_of_the_approval_that_let_it_run(
        self, dies_after_paying
    ):
        from approvals.actions.decisions import check_complete_approval
        from approvals.actions.rules import check_save_rule
        from approvals.exceptions import DecisionForbiddenError
        from tests.factories import reviewer

        ann, bob = reviewer("ann", role="admin"), reviewer("bob", role="admin")
        sam, ada = reviewer("sam"), reviewer("ada", role="admin")
        check_save_rule(
            tenant=default_tenant(),
            fields={
                "name": "payments: two named admins",
                "tool_pattern": "probe.pay",
                "gate": "always_ask",
                "required_role": "admin",
                "required_approvals": 2,
            },
            reviewers=[ann, bob],
            acting_user=None,
            surface="system",
        )
        SCRIPT.replies = [calls(("p", "probe.pay", {"amountCents": 500, "to": "bob"})), answer("paid")]
        run = start("probe.payer")
        repeat = interrupted_after_approval(run, ann, bob)
        assert dies_after_paying.payments == [(500, "bob")]  # it took effect before the worker died

        assert repeat.required_role == "admin"
        assert sorted(repeat.reviewer_ids) == sorted([ann.pk, bob.pk])
        assert repeat.required_approvals == 2
        assert repeat.gate["reason"].startswith(
            "recovery: the call started but its result was never recorded"
        )
        assert (
            "Repeating it needs at least what running it needed: the role admin or higher, 2 approvals "
            "from distinct reviewers, reviewers among the 2 named"
        ) in repeat.gate["reason"]
        # A standard reviewer nobody named may not repeat it; nor an admin nobody named.
        with pytest.raises(DecisionForbiddenError, match="only these reviewers may decide this approval"):
            check_complete_approval(approval_id=repeat.pk, acting_user=sam, decision="approve")
        with pytest.raises(DecisionForbiddenError, match="only these reviewers may decide this approval"):
            check_complete_approval(approval_id=repeat.pk, acting_user=ada, decision="approve")
        # One of the two named alone does not repeat it; both do.
        check_complete_approval(approval_id=repeat.pk, acting_user=ann, decision="approve")
        assert Run.objects.get(pk=run.pk).status == RunStatus.SUSPENDED
        assert dies_after_paying.payments == [(500, "bob")]
        check_complete_approval(approval_id=repeat.pk, acting_user=bob, decision="approve")
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED
        assert dies_after_paying.payments == [(500, "bob"), (500, "bob")]

    def test_it_needs_what_escalation_raised_the_approval_that_let_it_run_to(self, dies_after_paying):
        from approvals.actions.decisions import check_complete_approval
        from approvals.actions.rules import check_save_rule
        from approvals.escalation import escalate_due_approvals
        from approvals.exceptions import DecisionForbiddenError
        from tests.factories import reviewer

        rita, bo = reviewer("rita", role="admin"), reviewer("bo", role="admin")
        sam = reviewer("sam")
        check_save_rule(
            tenant=default_tenant(),
            fields={
                "name": "payments",
                "tool_pattern": "probe.pay",
                "gate": "always_ask",
                "escalation": [
                    {"afterSeconds": 30, "raiseRole": "admin"},
                    {"afterSeconds": 60, "addReviewers": ["bo"]},
                ],
            },
            reviewers=[rita, sam],
            acting_user=None,
            surface="system",
        )
        SCRIPT.replies = [calls(("p", "probe.pay", {"amountCents": 500, "to": "bob"})), answer("paid")]
        run = start("probe.payer")
        approval = run.approvals.get()
        assert (approval.required_role, sorted(approval.reviewer_ids)) == (
            "standard",
            sorted([rita.pk, sam.pk]),
        )
        escalate_due_approvals(now=approval.created_at + timedelta(seconds=61))
        journaled = run.journal.get(kind="approval.escalated", payload__action="addReviewers").payload
        assert sorted(journaled["reviewerIds"]) == sorted([rita.pk, sam.pk, bo.pk])
        repeat = interrupted_after_approval(run, bo)

        # The rule alone asks any of its named reviewers in the lowest role: the approval that let
        # the call run needed an admin among three named, after its escalation.
        assert repeat.required_role == "admin"
        assert sorted(repeat.reviewer_ids) == sorted([rita.pk, sam.pk, bo.pk])
        assert repeat.required_approvals == 1
        with pytest.raises(DecisionForbiddenError, match="needs a reviewer with the role 'admin'"):
            check_complete_approval(approval_id=repeat.pk, acting_user=sam, decision="approve")
        check_complete_approval(approval_id=repeat.pk, acting_user=rita, decision="approve")
        run.refresh_from_db()
        assert run.status == RunStatus.COMPLETED


def test_a_sweep_from_a_process_without_the_runs_pack_leaves_the_run_and_says_so():
    import io

    from django.core.management import call_command
    from django.core.management.base import CommandError
    from django.test import override_settings

    dead = stalled_run(claim_expires_in=timedelta(seconds=-5))
    errors = io.StringIO()
    with override_settings(KINDGI_PACKS=["packs.my_pack"]), pytest.raises(CommandError, match="1 run"):
        call_command("recover_runs", stdout=io.StringIO(), stderr=errors)
    assert f"run {dead.pk}: agent probe.free@1.0.0 is not in this process's packs" in errors.getvalue()
    dead.refresh_from_db()
    assert (dead.status, dead.failure_message, dead.claim_token) == (RunStatus.RUNNING, "", "someone-else")
    # With the packs, the same sweep takes it on.
    SCRIPT.replies = [answer("recovered")]
    call_command("recover_runs", stdout=io.StringIO())
    dead.refresh_from_db()
    assert dead.status == RunStatus.COMPLETED


def test_the_sweep_queues_runs_whose_executor_died():
    from runs.actions import recover_stuck_runs

    SCRIPT.replies = [answer("recovered")]
    alive = stalled_run()
    dead = stalled_run(claim_expires_in=timedelta(seconds=-5))
    assert recover_stuck_runs().done == [dead.pk]
    dead.refresh_from_db()
    alive.refresh_from_db()
    assert (dead.status, alive.status) == (RunStatus.COMPLETED, RunStatus.RUNNING)


def test_an_interrupted_call_to_an_idempotent_tool_is_repeated_with_the_same_key():
    SCRIPT.replies = [answer()]
    run = stalled_run(
        claim_expires_in=timedelta(minutes=-1),
        messages=PENDING_IDEMPOTENT_WRITE,
        journal=[
            ("run.started", {}),
            ("model.called", {}),
            ("tool.called", {"callId": "w", "toolId": "probe.idempotent-write"}),
        ],
    )
    execute(run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert TIMELINE.calls("w") == 1
    assert TIMELINE.contexts[0].idempotency_key == f"{run.pk}:w"


def test_a_database_that_fails_mid_run_leaves_the_run_to_recovery_not_failed(monkeypatch):
    from django.db import OperationalError

    from runs import executor
    from runs.actions import recover_stuck_runs

    SCRIPT.replies = [answer("done after all")]
    run = stalled_run(status=RunStatus.QUEUED, claim_expires_in=timedelta(0))
    real_engine = executor._engine_for

    def engine_whose_database_fails(run, recorder, known):
        engine = real_engine(run, recorder, known)

        def execute():
            raise OperationalError("server closed the connection unexpectedly")

        engine.execute = execute
        return engine

    monkeypatch.setattr(executor, "_engine_for", engine_whose_database_fails)
    execute(run.pk)
    run.refresh_from_db()
    assert (run.status, run.failure_message) == (RunStatus.RUNNING, "")
    monkeypatch.setattr(executor, "_engine_for", real_engine)
    Run.objects.filter(pk=run.pk).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    assert recover_stuck_runs().done == [run.pk]
    run.refresh_from_db()
    assert (run.status, run.output) == (RunStatus.COMPLETED, {"reply": "done after all"})


def test_a_tool_is_told_whose_run_it_serves():
    SCRIPT.replies = [calls(("r", "probe.read", {"label": "r", "pause_ms": 0})), answer()]
    run = start("probe.free")
    [context] = TIMELINE.contexts
    assert (context.run_id, context.call_id) == (str(run.pk), "r")
    assert (context.tenant_id, context.tenant_slug) == (str(run.tenant_id), "acme")


def test_a_run_cancelled_while_a_tool_runs_records_nothing_more():
    SCRIPT.replies = [calls(("c", "probe.cancel-own-run", {"label": "c", "pause_ms": 0})), answer("never")]
    run = start("probe.free")
    assert run.status == RunStatus.CANCELLED
    assert TIMELINE.calls("c") == 1
    assert not run.journal.filter(kind="tool.completed").exists()
    assert run.journal.last().kind == "run.cancelled"
    assert len(SCRIPT.requests) == 1  # the model was not asked again


def test_calls_after_the_one_that_saw_the_run_cancelled_never_start():
    SCRIPT.replies = [
        calls(
            ("c", "probe.cancel-own-run", {"label": "c", "pause_ms": 0}),
            ("w", "probe.write", {"label": "w", "pause_ms": 0}),
        ),
        answer("never"),
    ]
    run = start("probe.free")
    assert run.status == RunStatus.CANCELLED
    assert TIMELINE.calls("c") == 1
    assert TIMELINE.calls("w") == 0
    assert not run.journal.filter(kind="tool.called", payload__callId="w").exists()


def test_journal_sequences_are_gapless_and_unique():
    SCRIPT.replies = [
        calls(
            ("a", "probe.peek", {"label": "a", "pause_ms": 0}),
            ("b", "probe.peek", {"label": "b", "pause_ms": 0}),
        ),
        answer(),
    ]
    run = start("probe.free")
    sequences = list(run.journal.values_list("sequence", flat=True))
    assert sequences == list(range(1, len(sequences) + 1))
    assert run.last_sequence == len(sequences)
    with pytest.raises(IntegrityError), transaction.atomic():
        JournalEntry.objects.create(run=run, sequence=1, kind="run.started")


def test_concurrent_appends_to_one_journal_stay_gapless():
    run = stalled_run()
    errors = []

    def append_ten():
        try:
            for _ in range(10):
                do_record(run.pk, token="someone-else", entries=[Entry(kind="tool.completed", payload={})])
        except Exception as error:  # surfaced below
            errors.append(error)
        finally:
            connection.close()  # a pool's connection not given back is lost to the tests after

    threads = [threading.Thread(target=append_ten) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    sequences = sorted(run.journal.values_list("sequence", flat=True))
    assert sequences == list(range(1, 81))


def test_a_runs_first_claim_writes_run_started_once_and_a_claim_is_taken_only_when_free():
    run = stalled_run(status=RunStatus.QUEUED)
    Run.objects.filter(pk=run.pk).update(claim_token="", claim_expires_at=None, dry_run=True)
    first = do_claim_run(run.pk, token="first")
    started = {"input": {"userMessage": "go"}, "dryRun": True, "readOnly": False}
    assert [(entry.sequence, entry.kind, entry.payload) for entry in first.journal] == [
        (1, "run.started", started)
    ]
    assert list(run.journal.values_list("sequence", "kind", "payload")) == [(1, "run.started", started)]
    assert (first.run.status, first.run.claim_token, first.run.last_sequence) == ("running", "first", 1)
    assert first.run.tenant == run.tenant
    assert do_claim_run(run.pk, token="second") is None  # held, and not expired
    Run.objects.filter(pk=run.pk).update(claim_expires_at=timezone.now() - timedelta(seconds=1))
    taken_over = do_claim_run(run.pk, token="second")
    assert taken_over.journal is None  # the journal is read, not written again
    assert (taken_over.run.claim_token, taken_over.run.started_at) == ("second", first.run.started_at)
    assert run.journal.count() == 1
    Run.objects.filter(pk=run.pk).update(status=RunStatus.COMPLETED)
    assert do_claim_run(run.pk, token="third") is None
    with pytest.raises(Run.DoesNotExist):
        do_claim_run(uuid4(), token="fourth")


def test_a_step_recorded_by_an_executor_that_lost_its_claim_writes_nothing():
    run = stalled_run(journal=[("run.started", {})])
    run.last_sequence = 1
    run.save(update_fields=["last_sequence"])
    steps = [
        Entry(kind="tool.called", payload={"callId": "a"}),
        Entry(kind="tool.completed", payload={"callId": "a"}),
    ]
    with pytest.raises(LostClaimError):
        do_record(
            run.pk, token="not-the-holder", entries=steps, messages_json='[{"role": "user", "content": "x"}]'
        )
    run.refresh_from_db()
    assert list(run.journal.values_list("kind", flat=True)) == ["run.started"]
    assert (run.last_sequence, run.messages) == (1, [])
    do_record(run.pk, token="someone-else", entries=steps)
    assert list(run.journal.values_list("sequence", "kind")) == [
        (1, "run.started"),
        (2, "tool.called"),
        (3, "tool.completed"),
    ]


def test_a_tool_call_longer_than_the_lease_keeps_its_claim(settings, tmp_path):
    """The executor renews its claim while a call runs: the sweep does not take the run over."""
    import time

    from django.db import connections

    from runs.actions import check_start_run, recover_stuck_runs

    settings.KINDGI_RUN_LEASE_SECONDS = 1
    side_effects = tmp_path / "effects.txt"

    def start_in_the_background():
        try:
            check_start_run(
                tenant=default_tenant(),
                principal=principal(default_tenant()),
                flow_id="probe.append",
                input={"path": str(side_effects), "pause_ms": 3000},
            )
        finally:
            connections.close_all()

    executing = threading.Thread(target=start_in_the_background)
    executing.start()
    deadline = time.monotonic() + 10
    while not side_effects.exists():
        assert time.monotonic() < deadline, "the tool did not start"
        time.sleep(0.05)
    time.sleep(2)  # twice the lease, mid-call
    assert recover_stuck_runs().done == []
    run = Run.objects.get()
    assert run.status == RunStatus.RUNNING
    assert run.claim_expires_at > timezone.now()
    executing.join(timeout=30)
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    assert len(side_effects.read_text().splitlines()) == 1
