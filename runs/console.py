"""Run pages of the console: the list, and a run with its live journal and timeline."""

from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_POST

from core.lookups import one_or_none
from runs import timeline
from runs.actions import check_cancel_run
from runs.exceptions import CancelForbiddenError, RunStateError
from runs.models import JournalEntry, Run, RunStatus
from runs.permissions import cancel_refusal
from runs.selectors import run_list_for_tenant


def _tenant(request):
    membership = getattr(request.user, "membership", None)
    return membership.tenant if membership else None


def _run_or_none(request, run_id) -> Run | None:
    tenant = _tenant(request)
    if tenant is None:
        return None
    return one_or_none(
        Run.objects.select_related("parent", "started_by", "service", "principal").filter(
            pk=run_id, tenant=tenant
        )
    )


@login_required
def run_list(request: HttpRequest) -> HttpResponse:
    tenant = _tenant(request)
    if tenant is None:
        return render(request, "console/not_a_reviewer.html", {"membership": None}, status=403)
    status = request.GET.get("status", "")
    runs = run_list_for_tenant(tenant, status=status if status in RunStatus.values else None)
    page = Paginator(runs, 50).get_page(request.GET.get("page"))
    return render(
        request, "console/runs.html", {"page": page, "status": status, "statuses": RunStatus.values}
    )


def _live_context(run: Run, user) -> dict:
    entries = list(run.journal.order_by("sequence"))
    children = list(run.children.order_by("created_at"))
    return {
        "run": run,
        "may_cancel": not run.is_finished and cancel_refusal(run, user) is None,
        "entries": entries,
        "timeline": timeline.build(
            entries, now=timezone.now(), live=not run.is_finished, children=_child_timelines(children)
        ),
        "children": children,
        "pending": _waited_on(run),
        "waits_for_connection": _connection_wait(run, user),
    }


def _waited_on(run: Run) -> list:
    """The approvals the run waits on: its own, and those of the agent steps it started."""
    approvals = run.approvals.model.objects.filter(
        Q(run=run) | Q(run__parent=run), tenant_id=run.tenant_id, status="pending"
    )
    return list(approvals.order_by("created_at"))


def _connection_wait(run: Run, user) -> dict | None:
    """What a run waiting on a connection waits for: which app, and whether it is ``user``'s to
    connect."""
    waitpoint = run.waitpoint or {}
    if run.status != "suspended" or waitpoint.get("subjectKind") != "connection:required":
        return None
    return {"app": waitpoint.get("app", ""), "yours": str(waitpoint.get("ownerId")) == str(user.pk)}


def _child_timelines(children: list[Run]) -> list[timeline.ChildRun]:
    """The runs the run's steps started, each with its journal: one query for all of them."""
    journals: dict = {child.pk: [] for child in children}
    for entry in JournalEntry.objects.filter(run__in=children).order_by("run_id", "sequence"):
        journals[entry.run_id].append(entry)
    return [
        timeline.ChildRun(
            title=f"step {child.parent_node_id}: {child.agent_key or child.flow_key} ({child.status})",
            href=reverse("console:run", args=[child.pk]),
            entries=journals[child.pk],
            live=not child.is_finished,
        )
        for child in children
    ]


@login_required
def run_page(request: HttpRequest, run_id: UUID) -> HttpResponse:
    run = _run_or_none(request, run_id)
    if run is None:
        return render(request, "console/not_found.html", {"what": "run"}, status=404)
    return render(request, "console/run.html", _live_context(run, request.user))


@login_required
def run_live(request: HttpRequest, run_id: UUID) -> HttpResponse:
    """The parts of the run page that change: fetched again whenever the run's socket says so."""
    run = _run_or_none(request, run_id)
    if run is None:
        return HttpResponse(status=404)
    return render(request, "console/run.html#run-live", _live_context(run, request.user))


@login_required
@require_POST
def run_cancel(request: HttpRequest, run_id: UUID) -> HttpResponse:
    run = _run_or_none(request, run_id)
    if run is None:
        return render(request, "console/not_found.html", {"what": "run"}, status=404)
    try:
        check_cancel_run(run.pk, reason="cancelled in the console", acting_user=request.user)
        messages.success(request, "The run was cancelled.")
    except (RunStateError, CancelForbiddenError) as error:
        messages.error(request, str(error))
    return redirect("console:run", run_id=run.pk)
