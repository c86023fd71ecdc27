"""Flow runs end to end with the immediate task backend, through the services."""

import pytest
from django.db import transaction

from packs.my_pack.order_book import ORDER_BOOK
from runs.actions import check_start_run, do_cancel_run, do_resume_run, resume_locked_run
from runs.exceptions import RunInputError, RunStateError, UnknownDefinitionError
from runs.models import JournalEntry, Run, RunStatus
from tests.factories import default_tenant, principal
from tests.runs.decide import decide

pytestmark = pytest.mark.django_db(transaction=True)


def kinds(run: Run) -> list[tuple[int, str, str]]:
    return [(e.sequence, e.kind, e.node_id) for e in run.journal.all()]


def test_check_order_dry_run_completes_with_the_shipped_order():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.check-order",
        input={"orderId": "ord_1001"},
        dry_run=True,
    )
    assert (run.status, run.dry_run, run.flow_version) == (RunStatus.COMPLETED, True, "0.1.0")
    assert run.output == {"status": "shipped", "orderId": "ord_1001", "totalCents": 4200}
    assert list(run.output) == ["status", "orderId", "totalCents"]
    assert kinds(run) == [
        (1, "run.started", ""),
        (2, "node.started", "lookup"),
        (3, "tool.called", "lookup"),
        (4, "tool.completed", "lookup"),
        (5, "node.completed", "lookup"),
        (6, "run.completed", ""),
    ]
    assert run.started_at <= run.finished_at


def test_note_order_dry_run_fails_before_the_effectful_tool_is_called():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.note-order",
        input={"orderId": "ord_1001", "text": "Customer called"},
        dry_run=True,
    )
    assert (run.status, run.dry_run) == (RunStatus.FAILED, True)
    assert run.failure_message == (
        'dry-run-effectful-tool: tool "my-pack.add-order-note" is not declared read-only '
        "(mutating: false), so it does not run in a dry run"
    )
    assert ORDER_BOOK.get("ord_1001").notes == []
    assert not run.journal.filter(kind="tool.called", node_id="note").exists()


def test_note_order_for_real_writes_the_note():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.note-order",
        input={"orderId": "ord_1001", "text": "Customer called"},
    )
    assert run.status == RunStatus.COMPLETED
    assert run.output == {"orderId": "ord_1001", "noteId": "note_1", "noteCount": 1}
    assert ORDER_BOOK.get("ord_1001").notes == ["Customer called"]


def test_a_read_only_flow_run_refuses_the_write_step():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.note-order",
        input={"orderId": "ord_1001", "text": "x"},
        read_only=True,
    )
    assert run.status == RunStatus.FAILED
    assert run.failure_message.startswith('read-only-run: tool "my-pack.add-order-note" is not read-only')
    assert ORDER_BOOK.get("ord_1001").notes == []


def test_echo_flow_dry_run_skips_the_model_call():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.echo-flow",
        input={"name": "Ada"},
        dry_run=True,
    )
    assert run.status == RunStatus.COMPLETED
    assert run.output == {"reply": "[dry-run: model call skipped]", "greeting": "Hello, Ada!"}
    child = run.children.get()
    assert (child.flow_key, child.flow_version, child.agent_key) == (
        "agent.turn",
        "1.1.0",
        "my-pack.echo-agent",
    )
    assert child.parent_node_id == "respond"
    assert child.dry_run is True
    assert not child.journal.filter(kind="model.called").exists()


def test_echo_flow_runs_its_agent_as_a_child_run():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.echo-flow",
        input={"name": "Ada"},
    )
    assert run.output == {"reply": "Hello, Ada!", "greeting": "Hello, Ada!"}
    child = run.children.get()
    assert child.input == {"userMessage": "Hello, Ada!"}
    assert child.messages == [
        {"role": "user", "content": "Hello, Ada!"},
        {"role": "assistant", "content": "Hello, Ada!"},
    ]


def test_a_failing_tool_step_fails_the_run_with_the_tools_error():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="my-pack.check-order",
        input={"orderId": "ord_404"},
    )
    assert run.status == RunStatus.FAILED
    assert run.failure_message == (
        'tool-failed: node "lookup": tool "my-pack.lookup-order" returned ORDER_NOT_FOUND: '
        "There is no order 'ord_404'."
    )
    assert run.journal.filter(kind="tool.failed").count() == 1


def test_invalid_input_names_each_field_and_leaves_no_run():
    with pytest.raises(RunInputError) as error:
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="my-pack.note-order",
            input={"orderId": "", "txt": "x"},
        )
    assert error.value.errors == [
        "/input/orderId: String should have at least 1 character",
        "/input/text: Field required",
        "/input/txt: unknown field (the fields are: orderId, text)",
    ]
    with pytest.raises(RunInputError, match="/input/userMessage: Field required"):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="acme-ops.status-agent",
            input={"message": "hi"},
        )
    with pytest.raises(RunInputError, match="/input: Input should be"):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            flow_id="my-pack.check-order",
            input=["ord_1001"],
        )
    assert Run.objects.count() == 0
    assert JournalEntry.objects.count() == 0


def test_an_unknown_flow_or_agent_is_refused():
    with pytest.raises(UnknownDefinitionError, match=r'there is no flow "my-pack\.nope"'):
        check_start_run(
            tenant=default_tenant(), principal=principal(default_tenant()), flow_id="my-pack.nope", input={}
        )
    with pytest.raises(
        UnknownDefinitionError, match=r'there is no agent "my-pack\.echo-agent" version 9\.9\.9'
    ):
        check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="my-pack.echo-agent",
            version="9.9.9",
            input={"userMessage": "x"},
        )
    with pytest.raises(RunInputError, match="exactly one of a flow or an agent"):
        check_start_run(tenant=default_tenant(), principal=principal(default_tenant()), input={})
    assert Run.objects.count() == 0


def test_the_status_flow_waits_on_its_agent_step_and_continues_from_it():
    flow = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="acme-ops.status-flow",
        input={"userMessage": "Checkout is back to normal."},
    )
    assert flow.status == RunStatus.SUSPENDED
    child = flow.children.get()
    assert child.status == RunStatus.SUSPENDED
    assert child.waitpoint["kind"] == "approval"
    assert child.waitpoint["arguments"] == {"message": "Checkout is back to normal."}
    suspended = flow.journal.get(kind="wait.suspended")
    assert suspended.node_id == "respond"
    assert suspended.payload["waitpoint"] == {
        "kind": "child-run",
        "runId": str(child.pk),
        "nodeId": "respond",
    }

    approval = child.approvals.get()
    assert approval.provenance_ref == {"runId": str(child.pk)}
    decide(child, "call_post_update")

    flow.refresh_from_db()
    assert flow.status == RunStatus.COMPLETED
    assert flow.output == {"reply": "Posted to the status page: Checkout is back to normal."}
    assert kinds(flow) == [
        (1, "run.started", ""),
        (2, "node.started", "respond"),
        (3, "wait.suspended", "respond"),
        (4, "wait.resumed", "respond"),
        (5, "node.completed", "respond"),
        (6, "run.completed", ""),
    ]
    # the flow continued from the waiting step: one child, started once
    assert flow.children.count() == 1
    assert flow.journal.filter(kind="node.started").count() == 1


def test_an_approval_waitpoint_resumes_only_through_its_decision():
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        agent_id="acme-ops.status-agent",
        input={"userMessage": "Up."},
    )
    with pytest.raises(RunStateError, match="waits on an approval; it resumes when the approval is decided"):
        do_resume_run(run.pk, waitpoint_key={"kind": "approval"}, resolution={"decision": "approve"})
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        with pytest.raises(RunStateError, match="does not wait on"):
            resume_locked_run(locked, waitpoint_key={"kind": "approval", "callId": "other"}, resolution={})
    run = decide(run, "call_post_update")
    assert run.status == RunStatus.COMPLETED
    with transaction.atomic(), pytest.raises(RunStateError, match="is completed, not suspended"):
        resume_locked_run(Run.objects.select_for_update().get(pk=run.pk), waitpoint_key={}, resolution={})


def test_cancelling_a_flow_cancels_its_child_and_nothing_runs_after():
    flow = check_start_run(
        tenant=default_tenant(),
        principal=principal(default_tenant()),
        flow_id="acme-ops.status-flow",
        input={"userMessage": "Up."},
    )
    child = flow.children.get()
    do_cancel_run(flow.pk, reason="changed my mind")
    flow.refresh_from_db()
    child.refresh_from_db()
    assert (flow.status, child.status) == (RunStatus.CANCELLED, RunStatus.CANCELLED)
    assert flow.journal.last().payload["reason"] == "changed my mind"
    assert child.journal.last().payload["reason"] == "its parent run was cancelled"
    assert child.approvals.get().status == "cancelled"
    with pytest.raises(RunStateError, match="is cancelled, not suspended"):
        do_resume_run(child.pk, waitpoint_key={}, resolution={})
    with pytest.raises(RunStateError, match="already cancelled"):
        do_cancel_run(flow.pk)


def test_a_run_belongs_to_the_acting_users_tenant_and_an_outsider_starts_nothing():
    from django.contrib.auth import get_user_model

    from tenants.exceptions import NotAMemberError
    from tests.factories import member, other_tenant

    ada = member("ada", tenant=other_tenant())
    run = check_start_run(flow_id="my-pack.check-order", input={"orderId": "ord_1001"}, acting_user=ada)
    assert (run.tenant.slug, run.started_by) == ("globex", ada)

    outsider = get_user_model().objects.create_user(username="outsider")
    with pytest.raises(NotAMemberError, match="belongs to no tenant"):
        check_start_run(flow_id="my-pack.check-order", input={"orderId": "ord_1001"}, acting_user=outsider)
    with pytest.raises(NotAMemberError):
        check_start_run(flow_id="my-pack.check-order", input={"orderId": "ord_1001"})
    assert Run.objects.count() == 1
