"""The reviewer console: the queue, an approval, deciding (one or several)."""

import json
from datetime import timedelta
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals.actions import check_complete_approval
from approvals.console.forms import DecisionForm
from approvals.exceptions import ApprovalError, ApprovalInputError
from approvals.models import ApprovalStatus, Reviewer
from approvals.permissions import can_decide, names_of_reviewers
from approvals.selectors import approval_get_for_tenant, approval_list_for_tenant
from tools.models import Tool
from tools.registry import get_registry

PAGE_SIZE = 50
AGES = {"hour": timedelta(hours=1), "day": timedelta(days=1)}


def _context(request: HttpRequest):
    membership = getattr(request.user, "membership", None)
    reviewer = Reviewer.objects.filter(user=request.user).first() if membership else None
    return membership, reviewer


def _not_ready(request, membership, reviewer) -> HttpResponse | None:
    if membership is None or reviewer is None:
        return render(request, "console/not_a_reviewer.html", {"membership": membership}, status=403)
    return None


def _offer(reviewer: Reviewer, approval, **known) -> tuple[bool, str]:
    """Whether to offer ``reviewer`` a decision on ``approval``, and if not, why: exactly what
    the decision action would say (``can_decide``)."""
    refusal = can_decide(reviewer, approval, **known)
    return (True, "") if refusal is None else (False, refusal.reason)


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    membership, reviewer = _context(request)
    if (refusal := _not_ready(request, membership, reviewer)) is not None:
        return refusal
    filters = {key: request.GET.get(key, "") for key in ("agent", "tool", "age")}
    approvals = approval_list_for_tenant(membership.tenant, status=ApprovalStatus.PENDING)
    if filters["agent"]:
        approvals = approvals.filter(agent_key=filters["agent"])
    if filters["tool"]:
        approvals = approvals.filter(tool_key=filters["tool"])
    if filters["age"] in AGES:
        approvals = approvals.filter(created_at__gte=timezone.now() - AGES[filters["age"]])
    elif filters["age"] == "older":
        approvals = approvals.filter(created_at__lt=timezone.now() - AGES["day"])
    page = Paginator(approvals, PAGE_SIZE).get_page(request.GET.get("page"))
    tools = {
        (tool.key, tool.version): tool
        for tool in Tool.objects.filter(key__in={a.tool_key for a in page}).only(
            "key", "version", "effects", "is_read_only"
        )
    }
    now = timezone.now()
    names = names_of_reviewers({user_id for a in page for user_id in a.reviewer_ids})
    rows = [
        {
            "approval": a,
            "tool": tools.get((a.tool_key, a.tool_version)),
            "decidable": _offer(reviewer, a, now=now, reviewer_names=names),
        }
        for a in page
    ]
    # No ordering: with one, DISTINCT would count the ordering column too, and return every row.
    pending = approval_list_for_tenant(membership.tenant, status=ApprovalStatus.PENDING).order_by()
    context = {
        "page": page,
        "rows": rows,
        "filters": filters,
        "reviewer": reviewer,
        "agents": sorted(set(pending.exclude(agent_key="").values_list("agent_key", flat=True).distinct())),
        "tools": sorted(set(pending.values_list("tool_key", flat=True).distinct())),
    }
    template = "console/queue.html#approval-list" if request.htmx else "console/queue.html"
    return render(request, template, context)


@login_required
def approval_page(request: HttpRequest, approval_id: UUID) -> HttpResponse:
    membership, reviewer = _context(request)
    if (refusal := _not_ready(request, membership, reviewer)) is not None:
        return refusal
    try:
        approval = approval_get_for_tenant(membership.tenant, approval_id)
    except ApprovalError:
        return render(request, "console/not_found.html", {"what": "approval"}, status=404)
    tool = get_registry().tool(approval.tool_key, approval.tool_version)
    form = DecisionForm(schema=tool.input_schema if tool else {}, arguments=approval.arguments)
    status = 200
    errors: list[str] = []
    if request.method == "POST":
        form = DecisionForm(
            request.POST, schema=tool.input_schema if tool else {}, arguments=approval.arguments
        )
        if form.is_valid():
            try:
                check_complete_approval(
                    approval_id=approval.pk,
                    acting_user=request.user,
                    decision=form.cleaned_data["decision"],
                    rationale=form.cleaned_data["rationale"],
                    arguments=form.edited_arguments(),
                )
            except ApprovalInputError as error:
                errors = form.add_argument_errors(
                    [line.replace("/rationale: ", "Rationale: ") for line in error.errors]
                )
                status = 400
            except ApprovalError as error:
                errors, status = [str(error)], 409
            else:
                messages.success(request, f"{form.cleaned_data['decision'].capitalize()}d: {approval.title}")
                return redirect("console:run", run_id=approval.run_id)
        else:
            status = 400
    run = approval.run
    context = {
        "approval": approval,
        "tool": tool,
        "effects": [effect.describe() for effect in tool.effects] if tool else [],
        "arguments_json": json.dumps(approval.arguments, indent=2, ensure_ascii=False),
        "run": run,
        "parent": run.parent,
        "messages_list": run.messages,
        "form": form,
        "errors": errors,
        "decidable": _offer(reviewer, approval),
        "reviewer": reviewer,
    }
    return render(request, "console/approval.html", context, status=status)


@login_required
@require_POST
def bulk_decide(request: HttpRequest) -> HttpResponse:
    """Decide several pending approvals at once; each is its own decision and audit record."""
    membership, reviewer = _context(request)
    if (refusal := _not_ready(request, membership, reviewer)) is not None:
        return refusal
    decision = request.POST.get("decision")
    rationale = request.POST.get("rationale", "")
    try:
        ids = [UUID(value) for value in request.POST.getlist("approval")]
    except ValueError:
        reason = "Every selected approval must be an approval's id; one of them is not."
        return render(request, "console/bad_request.html", {"reason": reason}, status=400)
    done, failed = 0, []
    for approval_id in ids:
        try:
            check_complete_approval(
                approval_id=approval_id, acting_user=request.user, decision=decision, rationale=rationale
            )
            done += 1
        except (ApprovalError, ValueError) as error:
            failed.append(str(error))
    if done:
        messages.success(request, f"{decision.capitalize() if decision else 'Decide'}d {done} approval(s).")
    for reason in failed:
        messages.error(request, reason)
    if not ids:
        messages.error(request, "Select at least one approval.")
    return redirect("console:queue")
