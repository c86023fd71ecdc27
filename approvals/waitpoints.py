"""The approval waitpoint: an Approval appears when a run suspends on a call, and goes with it."""

from datetime import timedelta
from typing import Any

from django.utils import timezone

from approvals.escalation_steps import approval_escalation, due_at
from approvals.events import CANCELLED, CREATED, announce
from approvals.models import Approval, ApprovalStatus, Reviewer
from approvals.roles import lowest_role
from core.conf import setting
from core.rows import insert_rows
from kindgi.summaries import fallback_summary
from runs.engine.waitpoints import CONNECTION_USE, PENDING_TOOL_CALL
from runs.models import Run
from runs.principals import principal_of
from tools.mcp.definitions import tool_for_tenant


def _expiry(gate: dict[str, Any], escalation: list[dict[str, Any]], now):
    """When it expires: its TTL, or its escalation's last step if that expires it sooner (so that
    reminders, the console and decision links know the time ahead)."""
    seconds = [gate.get("ttlSeconds") or setting("KINDGI_APPROVAL_TTL_SECONDS")]
    seconds += [step["afterSeconds"] for step in escalation if step.get("expire")]
    seconds = [value for value in seconds if value]
    return now + timedelta(seconds=min(seconds)) if seconds else None


def _connection_of(run: Run, waitpoint: dict[str, Any]) -> dict[str, Any] | None:
    """For a connection:use waitpoint: the connection the call would use, and its owner (as the
    run's start named them)."""
    if waitpoint.get("subjectKind") != CONNECTION_USE:
        return None
    app, owner_id = waitpoint["app"], int(waitpoint["ownerId"])
    named = (run.connection_owners or {}).get(app) or {}
    connection = {"app": app, "ownerId": owner_id, "owner": named.get("username") or str(owner_id)}
    if named.get("label"):
        connection["label"] = named["label"]
    return connection


def summary_of(tool_id: str, version: str, arguments: Any, *, run: Run) -> str:
    """The call in a sentence: its tool's summary, or, for a tool no longer loaded, its id and
    arguments (a pack's tools cost no query; an MCP server's are read)."""
    tool = tool_for_tenant(tool_id, version, run.tenant_id)
    if tool is None:
        return fallback_summary(f"Calls {tool_id}", arguments)
    return tool.summarize(arguments)


class ApprovalWaitpoints:
    def on_suspend(self, run: Run, waitpoint: dict[str, Any], *, first: bool = False) -> dict[str, Any]:
        """Precondition: the caller holds the run's claim, and this transaction checks it before
        committing (the run locked first, or its claimed UPDATE after), so no one else is
        creating its approval: the one made for a redelivered suspension is found, not made
        twice (unless the run never waited on this call before: then there is none to find, and
        none is looked for). Were an executor whose claim was lost ever to race the new holder
        here, the one-approval-per-call constraint keeps it single, and the loser's transaction
        is rolled back."""
        gate = waitpoint.get("gate", {})
        identity = {
            "run": run,
            "call_id": waitpoint["callId"],
            "subject_kind": waitpoint.get("subjectKind", PENDING_TOOL_CALL),
        }
        approval = None if first else Approval.objects.filter(**identity).first()
        if approval is None:
            connection = _connection_of(run, waitpoint)
            flow_step = not run.is_agent_turn
            version = run.tenant.config_version if Run.tenant.is_cached(run) else None
            escalation = approval_escalation(run.tenant_id, gate.get("ruleId"), config_version=version)
            now = timezone.now()
            approval = Approval(
                **identity,
                # The run's tenant, read with the locked run: its config version comes with it.
                **({"tenant": run.tenant} if Run.tenant.is_cached(run) else {"tenant_id": run.tenant_id}),
                tool_key=waitpoint["toolId"],
                tool_version=waitpoint["toolVersion"],
                agent_key="" if flow_step else run.agent_key,
                agent_version="" if flow_step else run.agent_version,
                flow_key=run.flow_key if flow_step else "",
                node_id=waitpoint.get("nodeId", "") if flow_step else "",
                arguments=waitpoint["arguments"],
                digest=waitpoint["digest"],
                summary=summary_of(
                    waitpoint["toolId"], waitpoint["toolVersion"], waitpoint["arguments"], run=run
                ),
                principal_id=principal_of(run),
                required_role=gate.get("requiredRole") or lowest_role(),
                gate=gate,
                reviewer_ids=list(gate.get("reviewerIds", [])),
                required_approvals=gate.get("requiredApprovals") or 1,
                connection=connection,
                expires_at=_expiry(gate, escalation, now),
                escalation=escalation,
                escalation_due_at=due_at(now, escalation, 0),
            )
            insert_rows([approval])  # the suspension's costliest write, were it Model.save's
            announce(approval, CREATED)  # its deciders are told by the sweeper (notifications)
        return {**waitpoint, "approvalId": str(approval.pk)}

    def on_cancel(self, run: Run) -> None:
        now = timezone.now()
        for approval in Approval.objects.filter(run=run, status=ApprovalStatus.PENDING):
            approval.status, approval.decided_at = ApprovalStatus.CANCELLED, now
            approval.save(update_fields=["status", "decided_at"])
            announce(approval, CANCELLED)

    def may_resolve_any(self, run_ids: list, user) -> bool:
        """Whether ``user`` may decide one of the pending approvals of the runs ``run_ids``, by the
        one set of decision rights."""
        from approvals.permissions import can_decide

        pending = Approval.objects.filter(run_id__in=run_ids, status=ApprovalStatus.PENDING)
        reviewer = Reviewer.objects.filter(user=user).first()
        return any(can_decide(reviewer, approval, user=user) is None for approval in pending)
