"""An approval as a span of its run's trace: ``kindgi.approval``, from the approval's making to
its decision (or expiry), so that a call that waited two hours for a senior reviewer, or was
rejected, shows where the run's other spans do.

Made once the decision commits, continuing the trace its run keeps (``Run.trace_context``) and
linked to the span current where it was decided (the reviewer's request). What the reviewer
wrote, and the call's arguments, only with ``KINDGI_OTEL_CAPTURE_CONTENT``.
"""

from opentelemetry.trace import SpanKind

from core import tracing

TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"


def trace_decided(approval, decision) -> None:
    """The span of ``approval``, settled by ``decision`` (a reviewer's, or its expiry's)."""
    if not tracing.enabled():
        return
    parent = tracing.context_of(_trace_context_of_run(approval))
    span = tracing.tracer().start_span(
        "kindgi.approval",
        context=parent,
        kind=SpanKind.INTERNAL,
        start_time=tracing.nanoseconds(approval.created_at),
        links=tracing.links_here(parent),
    )
    waited = decision.decided_at - approval.created_at
    tracing.set_attributes(
        span,
        {
            "kindgi.approval.id": str(approval.pk),
            "kindgi.approval.subject_kind": approval.subject_kind,
            "kindgi.approval.gate": (approval.gate or {}).get("gate"),
            "kindgi.approval.rule_id": (approval.gate or {}).get("ruleId"),
            "kindgi.approval.required_role": approval.required_role,
            "kindgi.approval.required_approvals": approval.required_approvals,
            "kindgi.approval.decision": decision.decision,
            "kindgi.approval.status": approval.status,
            # Empty for an expiry: no reviewer decided.
            "kindgi.approval.reviewer_role": decision.reviewer_role_at_decision,
            "kindgi.approval.wait_ms": round(waited.total_seconds() * 1000),
            "kindgi.approval.edited": decision.arguments is not None,
            "kindgi.run.id": str(approval.run_id),
            "gen_ai.agent.name": approval.agent_key,
            TOOL_NAME: approval.tool_key,
            TOOL_CALL_ID: approval.call_id,
        },
    )
    if tracing.capture_content():
        tracing.set_attributes(
            span,
            {
                # The gate's reason in words: it may quote the call (a budget's amounts).
                "kindgi.approval.reason": (approval.gate or {}).get("reason"),
                "kindgi.approval.rationale": decision.rationale,
                TOOL_ARGUMENTS: tracing.content(approval.arguments),
                "kindgi.approval.edited_arguments": tracing.content(decision.arguments)
                if decision.arguments is not None
                else None,
            },
        )
    span.end(end_time=tracing.nanoseconds(decision.decided_at))


def _trace_context_of_run(approval) -> str:
    if type(approval).run.is_cached(approval):
        return approval.run.trace_context
    from runs.models import Run

    return Run.objects.filter(pk=approval.run_id).values_list("trace_context", flat=True).first() or ""
