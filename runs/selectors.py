"""Reads of runs and journals."""

from typing import Any

from runs.models import JournalEntry, JournalKind, Run, RunStatus


def conversation_history(run: Run) -> list[dict[str, Any]]:
    """The messages of the conversation's latest completed turn before ``run``."""
    if run.conversation_id is None:
        return []
    previous = (
        Run.objects.filter(conversation_id=run.conversation_id, status=RunStatus.COMPLETED)
        .exclude(pk=run.pk)
        .order_by("-created_at")
        .only("messages")
        .first()
    )
    return list(previous.messages) if previous else []


def conversation_approvals(run: Run) -> set[str]:
    """The tools a person approved in the conversation's other turns."""
    if run.conversation_id is None:
        return set()
    resumed = (
        JournalEntry.objects.filter(run__conversation_id=run.conversation_id, kind=JournalKind.WAIT_RESUMED)
        .exclude(run=run)
        .values_list("payload", flat=True)
    )
    return {
        payload["waitpoint"]["toolId"]
        for payload in resumed
        if (payload.get("waitpoint") or {}).get("kind") == "approval"
        and payload.get("resolution", {}).get("decision") == "approve"
    }
