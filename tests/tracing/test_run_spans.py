"""A run's spans (runs.tracing) and its approvals' (approvals.tracing), into memory."""

import pytest
from opentelemetry.trace import StatusCode

from approvals.actions.rules import check_save_rule
from core import tracing
from runs.actions import check_start_run
from runs.models import RunStatus
from runs.tracing import NO_TRACE, execution_trace
from tests.factories import default_tenant, principal
from tests.runs.decide import decide
from tests.runs.helpers import start
from tests.tracing.conftest import named, one

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGE = "Checkout is back to normal."
RATIONALE = "Confirmed with the on-call engineer"


def gated_run_approved():
    run = start("acme-ops.status-agent", MESSAGE)
    assert run.status == RunStatus.SUSPENDED
    return decide(run, "call_post_update", "approve", RATIONALE)


def test_a_gated_run_is_one_trace_across_its_suspension_and_resume(spans):
    run = gated_run_approved()
    assert run.status == RunStatus.COMPLETED
    first, resumed = sorted(named(spans, "invoke_agent acme-ops.status-agent"), key=lambda s: s.start_time)
    approval = one(spans, "kindgi.approval")
    tool = one(spans, "execute_tool acme-ops.post-update")
    asked, answered = sorted(
        named(spans, "chat packs.acme_ops.post_what_the_user_says"), key=lambda s: s.start_time
    )
    # One trace, kept with the run: the first execution started it, everything after continues it.
    assert {span.context.trace_id for span in spans.get_finished_spans()} == {first.context.trace_id}
    assert run.trace_context.startswith(f"00-{first.context.trace_id:032x}-{first.context.span_id:016x}-")
    assert first.parent is None
    assert asked.parent.span_id == first.context.span_id
    assert approval.parent.span_id == first.context.span_id
    assert resumed.parent.span_id == first.context.span_id
    assert tool.parent.span_id == resumed.context.span_id
    assert answered.parent.span_id == resumed.context.span_id
    # The approval spans the wait: from the suspension to the decision, before the call ran.
    assert approval.start_time <= first.end_time
    assert approval.end_time <= resumed.start_time <= tool.start_time
    assert first.attributes["kindgi.run.status"] == "suspended"
    assert first.attributes["kindgi.run.continued"] is False
    assert resumed.attributes["kindgi.run.status"] == "completed"
    assert resumed.attributes["kindgi.run.continued"] is True
    [suspended] = first.events
    assert suspended.name == "kindgi.run.suspended"
    assert dict(suspended.attributes) == {
        "kindgi.waitpoint.kind": "approval",
        "kindgi.approval.subject_kind": "tool-call:pending",
        "gen_ai.tool.name": "acme-ops.post-update",
        "gen_ai.tool.call.id": "call_post_update",
    }


def test_the_attributes_are_named_as_the_genai_conventions_spell_them(spans):
    run = gated_run_approved()
    agent = named(spans, "invoke_agent acme-ops.status-agent")[0]
    assert {
        name: agent.attributes[name]
        for name in (
            "gen_ai.operation.name",
            "gen_ai.agent.name",
            "gen_ai.agent.id",
            "gen_ai.agent.version",
            "gen_ai.conversation.id",
            "gen_ai.provider.name",
            "gen_ai.request.model",
        )
    } == {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "acme-ops.status-agent",
        "gen_ai.agent.id": "acme-ops.status-agent@0.1.0",
        "gen_ai.agent.version": "0.1.0",
        "gen_ai.conversation.id": str(run.pk),
        "gen_ai.provider.name": "kindgi.scripted",
        "gen_ai.request.model": "packs.acme_ops.post_what_the_user_says",
    }
    chat = named(spans, "chat packs.acme_ops.post_what_the_user_says")[0]
    assert chat.kind.name == "CLIENT"
    assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert chat.attributes["gen_ai.provider.name"] == "kindgi.scripted"
    assert chat.attributes["gen_ai.request.model"] == "packs.acme_ops.post_what_the_user_says"
    assert chat.attributes["gen_ai.usage.input_tokens"] == 0
    assert chat.attributes["gen_ai.usage.output_tokens"] == 0
    assert chat.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    tool = one(spans, "execute_tool acme-ops.post-update")
    assert {
        name: tool.attributes[name]
        for name in ("gen_ai.operation.name", "gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.type")
    } == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "acme-ops.post-update",
        "gen_ai.tool.call.id": "call_post_update",
        "gen_ai.tool.type": "function",
    }
    assert tool.attributes["kindgi.gate"] == "ask"
    assert "kindgi.gate.reason" not in tool.attributes  # a sentence that may quote the call: content
    approval = one(spans, "kindgi.approval")
    attributes = dict(approval.attributes)
    waited = attributes.pop("kindgi.approval.wait_ms")
    assert attributes == {
        "kindgi.approval.id": str(run.approvals.get().pk),
        "kindgi.approval.subject_kind": "tool-call:pending",
        "kindgi.approval.gate": "ask",
        "kindgi.approval.required_role": "standard",
        "kindgi.approval.required_approvals": 1,
        "kindgi.approval.decision": "approve",
        "kindgi.approval.status": "approved",
        "kindgi.approval.reviewer_role": "admin",
        "kindgi.approval.edited": False,
        "kindgi.run.id": str(run.pk),
        "gen_ai.agent.name": "acme-ops.status-agent",
        "gen_ai.tool.name": "acme-ops.post-update",
        "gen_ai.tool.call.id": "call_post_update",
    }
    assert waited == round((approval.end_time - approval.start_time) / 1_000_000)


CONTENT_ATTRIBUTES = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "kindgi.approval.rationale",
    "kindgi.approval.reason",
    "kindgi.gate.reason",
    "kindgi.call.refusal_reason",
}


def every_value(spans) -> str:
    return " ".join(str(value) for span in spans.get_finished_spans() for value in span.attributes.values())


def test_content_is_left_out_unless_opted_in(spans):
    gated_run_approved()
    assert one(spans, "execute_tool acme-ops.post-update")
    assert one(spans, "kindgi.approval")
    names = {name for span in spans.get_finished_spans() for name in span.attributes}
    assert not names & CONTENT_ATTRIBUTES
    text = every_value(spans)
    assert MESSAGE not in text
    assert RATIONALE not in text


def test_content_is_there_when_opted_in(spans, content_captured):
    gated_run_approved()
    tool = one(spans, "execute_tool acme-ops.post-update")
    assert tool.attributes["gen_ai.tool.call.arguments"] == '{"message": "Checkout is back to normal."}'
    assert '"posted": true' in tool.attributes["gen_ai.tool.call.result"]
    assert tool.attributes["kindgi.gate.reason"] == "override always_ask (agent code)"
    approval = one(spans, "kindgi.approval")
    assert approval.attributes["kindgi.approval.rationale"] == RATIONALE
    assert approval.attributes["kindgi.approval.reason"] == "override always_ask (agent code)"
    assert approval.attributes["gen_ai.tool.call.arguments"] == '{"message": "Checkout is back to normal."}'
    first = named(spans, "chat packs.acme_ops.post_what_the_user_says")[0]
    assert MESSAGE in first.attributes["gen_ai.input.messages"]
    assert '"type": "tool_call"' in first.attributes["gen_ai.output.messages"]
    resumed = sorted(named(spans, "invoke_agent acme-ops.status-agent"), key=lambda s: s.start_time)[1]
    assert "Posted to the status page" in resumed.attributes["gen_ai.output.messages"]


def test_a_rejected_call_is_the_approvals_decision_and_a_refused_tool_span(spans):
    run = start("acme-ops.status-agent", MESSAGE)
    run = decide(run, "call_post_update", "reject", "Not during the incident review")
    assert run.status == RunStatus.COMPLETED
    approval = one(spans, "kindgi.approval")
    assert (
        approval.attributes["kindgi.approval.decision"],
        approval.attributes["kindgi.approval.status"],
    ) == (
        "reject",
        "rejected",
    )
    tool = one(spans, "execute_tool acme-ops.post-update")
    assert tool.status.status_code == StatusCode.ERROR
    assert tool.attributes["kindgi.call.refused"] is True
    assert "kindgi.call.refusal_reason" not in tool.attributes
    assert tool.attributes["error.type"] == "rejected"
    assert tool.status.description == "rejected"
    assert [event.name for event in tool.events] == ["kindgi.call.refused"]
    assert "Not during the incident review" not in every_value(spans)


def test_a_call_the_policy_refuses_is_a_refused_tool_span_with_no_approval(spans):
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "frozen",
            "tool_pattern": "acme-ops.post-update",
            "gate": "deny",
            "reason": "Frozen.",
        },
        acting_user=None,
        surface="system",
    )
    run = start("acme-ops.status-agent", MESSAGE)
    assert run.status == RunStatus.COMPLETED
    assert named(spans, "kindgi.approval") == []
    tool = one(spans, "execute_tool acme-ops.post-update")
    assert tool.status.status_code == StatusCode.ERROR
    assert tool.attributes["error.type"] == "TOOL_NOT_ALLOWED"
    assert tool.attributes["kindgi.gate"] == "refuse"
    assert tool.status.description == "TOOL_NOT_ALLOWED"
    assert "Frozen." not in every_value(spans)  # the rule's reason, told to the model: content


def test_a_refusals_reason_is_there_when_opted_in(spans, content_captured):
    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "frozen",
            "tool_pattern": "acme-ops.post-update",
            "gate": "deny",
            "reason": "Frozen.",
        },
        acting_user=None,
        surface="system",
    )
    start("acme-ops.status-agent", MESSAGE)
    tool = one(spans, "execute_tool acme-ops.post-update")
    assert "Frozen." in tool.attributes["kindgi.call.refusal_reason"]


def test_a_failed_run_says_its_kind_of_failure_and_not_its_words(spans, monkeypatch):
    """A failure's message may quote a provider's answer or the input: only its code goes out."""
    from runs import executor

    def broken(*args, **kwargs):
        raise RuntimeError("the provider said: secret-token-123 is wrong")

    monkeypatch.setattr(executor, "resolve_model", broken)
    run = start("acme-ops.status-agent", MESSAGE)
    assert run.status == RunStatus.FAILED
    failed = one(spans, "invoke_agent acme-ops.status-agent")
    assert failed.status.status_code == StatusCode.ERROR
    assert failed.status.description == failed.attributes["error.type"]
    assert "secret-token-123" not in every_value(spans) + str(
        [s.status.description for s in spans.get_finished_spans()]
    )
    assert not any(event.name == "exception" for span in spans.get_finished_spans() for event in span.events)


def test_a_flows_steps_are_spans_and_its_agent_steps_run_within_them(spans):
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        flow_id="acme-ops.status-flow",
        input={"userMessage": MESSAGE},
    )
    child = run.children.get()
    decide(child, "call_post_update", "approve")
    run.refresh_from_db()
    assert run.status == RunStatus.COMPLETED
    flow = sorted(named(spans, "invoke_workflow acme-ops.status-flow"), key=lambda s: s.start_time)[0]
    assert (flow.attributes["gen_ai.operation.name"], flow.attributes["gen_ai.workflow.name"]) == (
        "invoke_workflow",
        "acme-ops.status-flow",
    )
    # The step's span in each execution of the flow: the first made the child run.
    step = sorted(named(spans, "kindgi.flow.step respond"), key=lambda s: s.start_time)[0]
    assert step.parent.span_id == flow.context.span_id
    assert (step.attributes["kindgi.flow.step.kind"], step.attributes["kindgi.flow.step.target"]) == (
        "agent",
        "acme-ops.status-agent",
    )
    agent = sorted(named(spans, "invoke_agent acme-ops.status-agent"), key=lambda s: s.start_time)[0]
    assert agent.parent.span_id == step.context.span_id
    assert {span.context.trace_id for span in spans.get_finished_spans()} == {flow.context.trace_id}


def test_a_tool_step_is_a_span_with_its_call_within(spans):
    run = check_start_run(
        tenant=default_tenant(),
        principal=principal(),
        flow_id="my-pack.note-order",
        input={"orderId": "ord_1001", "text": "Customer called"},
    )
    steps = [span for span in spans.get_finished_spans() if span.name.startswith("kindgi.flow.step ")]
    tools = [span for span in spans.get_finished_spans() if span.name.startswith("execute_tool ")]
    assert run.status == RunStatus.COMPLETED
    assert steps
    assert len(tools) == len(steps)
    for step, tool in zip(steps, tools, strict=True):
        assert tool.parent.span_id == step.context.span_id
        assert step.start_time <= tool.start_time <= tool.end_time <= step.end_time


def test_with_traces_off_nothing_is_kept_or_made():
    assert not tracing.enabled()
    run = start("acme-ops.status-agent", MESSAGE)
    assert run.trace_context == ""
    assert execution_trace(run, continued=False) is NO_TRACE
    assert tracing.traceparent_here() == ""


def test_an_expired_approval_is_a_span_with_no_reviewer(spans):
    from datetime import timedelta

    from django.utils import timezone

    from approvals.actions.approvals import do_expire_approval

    check_save_rule(
        tenant=default_tenant(),
        fields={
            "name": "soon",
            "tool_pattern": "acme-ops.post-update",
            "gate": "always_ask",
            "ttl_seconds": 60,
        },
        acting_user=None,
        surface="system",
    )
    run = start("acme-ops.status-agent", MESSAGE)
    assert do_expire_approval(run.approvals.get().pk, now=timezone.now() + timedelta(minutes=2))
    approval = one(spans, "kindgi.approval")
    assert approval.attributes["kindgi.approval.status"] == "expired"
    assert "kindgi.approval.reviewer_role" not in approval.attributes
    assert approval.attributes["kindgi.approval.wait_ms"] >= 120_000
    first = named(spans, "invoke_agent acme-ops.status-agent")[0]
    assert approval.parent.span_id == first.context.span_id
