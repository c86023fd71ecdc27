import pytest
from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrated_back_to(targets: list[tuple[str, str]]):
    """Migrate the test database back to ``targets``; return the models as they were then."""
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def migrate_to_the_latest() -> None:
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


@pytest.mark.django_db
def test_the_models_and_their_migrations_agree():
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


@pytest.mark.django_db(transaction=True)
def test_approvals_made_before_the_digest_bind_their_call_and_know_their_runs_starter():
    from runs.engine.waitpoints import call_digest
    from tests.factories import default_tenant, member

    old = migrated_back_to([("approvals", "0001_initial")])
    tenant = default_tenant()
    ada = member("ada")
    Run = old.get_model("runs", "Run")
    run = Run.objects.create(
        tenant_id=tenant.pk, flow_key="agent.turn", flow_version="1.1.0", started_by_id=ada.pk
    )
    child = Run.objects.create(tenant_id=tenant.pk, flow_key="agent.turn", flow_version="1.1.0", parent=run)
    arguments = {"message": "Up."}
    old.get_model("approvals", "Approval").objects.create(
        tenant_id=tenant.pk,
        run=child,
        call_id="c1",
        tool_key="acme-ops.post-update",
        tool_version="0.1.0",
        agent_key="acme-ops.status-agent",
        agent_version="0.1.0",
        arguments=arguments,
        required_role="standard",
    )
    migrate_to_the_latest()

    from approvals.models import Approval

    approval = Approval.objects.get()
    assert approval.digest == call_digest("acme-ops.post-update", "0.1.0", arguments)
    assert approval.principal_id == ada.pk  # its run's starter, who is its principal


@pytest.mark.django_db(transaction=True)
def test_decisions_made_before_the_chain_join_it_in_the_order_they_were_made():
    from datetime import timedelta

    from django.utils import timezone

    from approvals.chain import first_break
    from tests.factories import default_tenant

    old = migrated_back_to([("approvals", "0002_flow_steps_and_bound_approvals")])
    tenant = default_tenant()
    Run = old.get_model("runs", "Run")
    Approval = old.get_model("approvals", "Approval")
    Decision = old.get_model("approvals", "Decision")
    now = timezone.now()
    # Written in the other order than they were decided: the chain follows the decisions' times.
    for minutes, call in ((1, "second"), (2, "first")):
        run = Run.objects.create(tenant_id=tenant.pk, flow_key="agent.turn", flow_version="1.1.0")
        approval = Approval.objects.create(
            tenant_id=tenant.pk,
            run=run,
            call_id=call,
            tool_key="t.t",
            tool_version="1.0.0",
            required_role="standard",
        )
        Decision.objects.create(
            approval=approval, decision="approve", decided_at=now - timedelta(minutes=minutes)
        )
    migrate_to_the_latest()

    from approvals.models import Decision as Chained

    chained = list(Chained.objects.filter(tenant=tenant).order_by("sequence"))
    assert [d.approval.call_id for d in chained] == ["first", "second"]
    assert first_break(chained) is None


@pytest.mark.django_db(transaction=True)
def test_approvals_decided_before_two_person_approvals_know_the_decision_that_settled_them():
    from django.utils import timezone

    from tests.factories import default_tenant, reviewer

    tenant = default_tenant()
    sam = reviewer("sam")  # made as the models are now, before the tables go back
    sams_registration = sam.reviewer.pk
    old = migrated_back_to([("approvals", "0004_approval_connection_alter_approval_subject_kind")])
    Run = old.get_model("runs", "Run")
    Approval = old.get_model("approvals", "Approval")
    Decision = old.get_model("approvals", "Decision")
    run = Run.objects.create(tenant_id=tenant.pk, flow_key="agent.turn", flow_version="1.1.0")
    made = {}
    for sequence, (call, choice) in enumerate((("yes", "approve"), ("no", "reject"), ("open", None)), 1):
        approval = Approval.objects.create(
            tenant_id=tenant.pk,
            run=run,
            call_id=call,
            tool_key="t.t",
            tool_version="1.0.0",
            required_role="standard",
        )
        made[call] = approval.pk
        if choice:
            Decision.objects.create(
                approval=approval,
                tenant_id=tenant.pk,
                sequence=sequence,
                previous_hash="-",
                hash="-",
                decision=choice,
                reviewer_id=sams_registration,
                reviewer_name="Sam",
                reviewer_role_at_decision="standard",
                decided_at=timezone.now(),
            )
    migrate_to_the_latest()

    from approvals.models import Approval as Now

    approved, rejected, pending = (Now.objects.get(pk=made[call]) for call in ("yes", "no", "open"))
    assert (approved.decision.decision, rejected.decision.decision, pending.decision) == (
        "approve",
        "reject",
        None,
    )
    assert [(given["userId"], given["reviewer"]) for given in approved.approvals_given] == [(sam.pk, "Sam")]
    assert (rejected.approvals_given, pending.approvals_given) == ([], [])
    assert approved.required_approvals == 1


@pytest.mark.django_db(transaction=True)
def test_approvals_made_before_the_sweeper_told_their_deciders_are_not_told_again():
    from approvals.notifications import queue_new_approvals
    from tests.factories import default_tenant

    old = migrated_back_to([("approvals", "0006_settling_decisions")])
    tenant = default_tenant()
    run = old.get_model("runs", "Run").objects.create(
        tenant_id=tenant.pk, flow_key="agent.turn", flow_version="1.1.0"
    )
    old.get_model("approvals", "Approval").objects.create(
        tenant_id=tenant.pk,
        run=run,
        call_id="c1",
        tool_key="t.t",
        tool_version="1.0.0",
        required_role="standard",
    )
    migrate_to_the_latest()

    from approvals.models import Approval

    approval = Approval.objects.get()
    assert approval.notified_at == approval.created_at  # their notifications were written when made
    assert queue_new_approvals() == []


@pytest.mark.django_db(transaction=True)
def test_runs_made_before_principals_stand_on_who_their_start_tells():
    """A person's run on its starter, its child too; a scheduled run on its schedule's owner; a
    mail-started run on its mailbox's owner; an approval on its run's principal. A service's run
    of a token that named no one is left without one."""
    from tests.factories import default_tenant, member

    tenant = default_tenant()
    ada, olga, mo = member("ada"), member("olga"), member("mo")
    old = migrated_back_to(
        [
            ("runs", "0006_escalation_entries_and_schedules"),
            ("mail", "0001_initial"),
            ("approvals", "0008_queue_filters_index"),
        ]
    )
    Run = old.get_model("runs", "Run")
    Schedule = old.get_model("runs", "Schedule")
    Mailbox = old.get_model("mail", "Mailbox")
    MailMessage = old.get_model("mail", "MailMessage")
    Approval = old.get_model("approvals", "Approval")
    turn = {"tenant_id": tenant.pk, "flow_key": "agent.turn", "flow_version": "1.1.0"}
    person = Run.objects.create(
        **turn, agent_key="acme-ops.status-agent", trigger="person", started_by_id=ada.pk
    )
    child = Run.objects.create(**turn, agent_key="acme-ops.status-agent", trigger="person", parent=person)
    flow = {"tenant_id": tenant.pk, "flow_key": "my-pack.check-order", "flow_version": "0.1.0"}
    last = Run.objects.create(**flow, trigger="schedule")
    earlier = Run.objects.create(**flow, trigger="schedule")
    Schedule.objects.create(
        tenant_id=tenant.pk,
        name="s",
        flow_key="my-pack.check-order",
        cron="0 9 * * *",
        owner_id=olga.pk,
        last_run=last,
    )
    mailed = Run.objects.create(**turn, agent_key="kindgi-mail.responder", trigger="mail")
    mailbox = Mailbox.objects.create(tenant_id=tenant.pk, address="help@acme.test", owner_id=mo.pk)
    MailMessage.objects.create(
        tenant_id=tenant.pk,
        mailbox=mailbox,
        direction="in",
        message_id="<m@x>",
        from_address="a@x",
        run=mailed,
    )
    service = Run.objects.create(**flow, trigger="service")
    waiting = Approval.objects.create(
        tenant_id=tenant.pk,
        run=earlier,
        call_id="c",
        tool_key="t.t",
        tool_version="1",
        required_role="standard",
    )
    migrate_to_the_latest()

    from approvals.models import Approval as Now
    from runs.models import Run as Attributed

    def principal(run):
        return Attributed.objects.get(pk=run.pk).principal_id

    assert [principal(run) for run in (person, child, last, earlier, mailed, service)] == [
        ada.pk,
        ada.pk,
        olga.pk,
        olga.pk,
        mo.pk,
        None,
    ]
    assert Now.objects.get(pk=waiting.pk).principal_id == olga.pk
