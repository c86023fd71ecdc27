"""The reviewer console: the queue, an approval, deciding (one or several)."""

from datetime import timedelta
from uuid import UUID

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Substr
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals.actions.decisions import CompletionKind, check_complete_approval, decide_each
from approvals.actions.reviewers import check_set_notifications
from approvals.console import charts
from approvals.console.forms import DecisionForm
from approvals.exceptions import ApprovalError, ApprovalInputError
from approvals.insight import WINDOWS, decision_insight
from approvals.models import Approval, ApprovalStatus, Reviewer
from approvals.permissions import can_decide, names_of_reviewers
from approvals.selectors import approval_get_for_tenant, approval_list_for_tenant
from approvals.step_up import StepUp, begin, needs_step_up
from audit.models import Surface
from core.errors import DomainError
from core.lookups import one_or_none
from runs.conversation import conversation_of
from runs.engine.waitpoints import CONNECTION_USE, PENDING_TOOL_CALL
from tenants.passkeys import PasskeyError, RelyingParty
from tools.mcp.definitions import tool_for_tenant
from tools.models import Tool

PAGE_SIZE = 50
AGES = {"hour": timedelta(hours=1), "day": timedelta(days=1)}


def _context(request: HttpRequest):
    membership = getattr(request.user, "membership", None)
    reviewer = one_or_none(Reviewer.objects.filter(user=request.user)) if membership else None
    return membership, reviewer


def _not_ready(request, membership, reviewer) -> HttpResponse | None:
    if membership is None or reviewer is None:
        return render(request, "console/not_a_reviewer.html", {"membership": membership}, status=403)
    return None


def _offer(reviewer: Reviewer | None, approval, *, user, **known) -> tuple[bool, str]:
    """Whether to offer ``user`` (with their registration ``reviewer``) a decision on
    ``approval``, and if not, why: exactly what the decision action would say (``can_decide``)."""
    refusal = can_decide(reviewer, approval, user=user, **known)
    return (True, "") if refusal is None else (False, refusal.reason)


@login_required
def queue(request: HttpRequest) -> HttpResponse:
    membership, reviewer = _context(request)
    if (refusal := _not_ready(request, membership, reviewer)) is not None:
        return refusal
    filters = {key: request.GET.get(key, "") for key in ("agent", "tool", "age", "order")}
    now = timezone.now()
    # Past its expiry an approval lets nothing run: it leaves the queue then, sweep or no sweep.
    approvals = approval_list_for_tenant(membership.tenant, status=ApprovalStatus.PENDING).exclude(
        expires_at__lte=now
    )
    if filters["agent"]:
        approvals = approvals.filter(agent_key=filters["agent"])
    if filters["tool"]:
        approvals = approvals.filter(tool_key=filters["tool"])
    if filters["age"] in AGES:
        approvals = approvals.filter(created_at__gte=timezone.now() - AGES[filters["age"]])
    elif filters["age"] == "older":
        approvals = approvals.filter(created_at__lt=timezone.now() - AGES["day"])
    # Oldest first: the call that has waited longest is the one to decide next.
    approvals = approvals.order_by("-created_at" if filters["order"] == "newest" else "created_at")
    paginator = Paginator(
        approvals.annotate(first_message=Substr(KeyTextTransform("userMessage", "run__input"), 1, 2001)),
        PAGE_SIZE,
    )
    # Counted without the run whose message each row quotes: the count then reads one index
    # (approvals_queue_filters) and joins nothing.
    paginator.count = approvals.count()
    page = paginator.get_page(request.GET.get("page"))
    tools = {
        (tool.key, tool.version): tool
        for tool in Tool.objects.filter(key__in={a.tool_key for a in page}).only(
            "key", "version", "description", "effects", "is_read_only"
        )
    }
    names = names_of_reviewers({user_id for a in page for user_id in a.reviewer_ids})
    rows = [
        {
            "approval": a,
            "tool": tools.get((a.tool_key, a.tool_version)),
            "decidable": _offer(reviewer, a, user=request.user, now=now, reviewer_names=names),
        }
        for a in page
    ]
    # The filters' choices, in one statement. No ordering: with one, DISTINCT would count the
    # ordering column too, and return every row.
    pending = approval_list_for_tenant(membership.tenant, status=ApprovalStatus.PENDING).order_by()
    waiting = set(pending.values_list("agent_key", "tool_key").distinct())
    context = {
        "page": page,
        "rows": rows,
        "filters": filters,
        "reviewer": reviewer,
        "agents": sorted({agent for agent, _ in waiting if agent}),
        "tools": sorted({tool for _, tool in waiting}),
    }
    template = "console/queue.html#approval-list" if request.htmx else "console/queue.html"
    return render(request, template, context)


DECIDED_WORDS = {"approve": "Approved", "reject": "Rejected", "request_changes": "Changes requested"}
# What the queue's bulk bar decides at once (a request for changes is a note to one model).
BULK_DECISIONS = ("approve", "reject")


def _approval_context(request, membership, reviewer, approval_id) -> dict | None:
    try:
        approval = approval_get_for_tenant(membership.tenant, approval_id)
    except ApprovalError:
        return None
    if reviewer is None and approval.connection_owner_id != request.user.pk:
        return None  # not a reviewer: they see only what asks for their own yes
    tool = tool_for_tenant(approval.tool_key, approval.tool_version, membership.tenant_id)
    return {
        "approval": approval,
        "decision": getattr(approval, "decision", None),
        "tool": tool,
        "effects": [effect.sentence() for effect in tool.effects] if tool else [],
        "form": DecisionForm(
            schema=_editable(approval, tool), arguments=approval.arguments, may_allow=_may_allow(approval)
        ),
        "errors": [],
        "decidable": _offer(reviewer, approval, user=request.user),
        "reviewer": reviewer,
        "step_up": needs_step_up(approval),
        "has_passkey": request.user.passkeys.exists() if needs_step_up(approval) else True,
    }


def _editable(approval, tool) -> dict:
    """The schema of the arguments a decider may edit: none for a connection's use (its owner
    allows or refuses the use; the call is the reviewers' to change), nor for a call that needs
    several approvals (each reviewer approves the same call)."""
    if tool is None or approval.subject_kind == CONNECTION_USE or approval.required_approvals > 1:
        return {}
    if needs_step_up(approval):
        return {}  # the passkey confirms the call as asked
    return tool.input_schema


def _may_allow(approval) -> bool:
    """Whether the page offers to allow calls like this one: a call's approval that one person
    decides (``approvals.actions.decisions`` refuses the others anyway)."""
    return (
        approval.subject_kind == PENDING_TOOL_CALL
        and approval.required_approvals == 1
        and not approval.subject_ref.get("flowId")
        and not needs_step_up(approval)
    )


@login_required
def approval_page(request: HttpRequest, approval_id: UUID) -> HttpResponse:
    membership, reviewer = _context(request)
    if membership is None:
        return _not_ready(request, membership, reviewer)
    context = _approval_context(request, membership, reviewer, approval_id)
    if context is None:
        if reviewer is None:
            return _not_ready(request, membership, reviewer)
        return render(request, "console/not_found.html", {"what": "approval"}, status=404)
    approval, tool, status = context["approval"], context["tool"], 200
    if request.method == "POST":
        form = DecisionForm(
            request.POST,
            schema=_editable(approval, tool),
            arguments=approval.arguments,
            may_allow=_may_allow(approval),
        )
        context["form"] = form
        if form.is_valid():
            decision = form.cleaned_data["decision"]
            try:
                completion = check_complete_approval(
                    approval_id=approval.pk,
                    acting_user=request.user,
                    decision=decision,
                    rationale=form.cleaned_data["rationale"],
                    arguments=form.edited_arguments(),
                    allow=form.allow(),
                    surface=Surface.CONSOLE,
                    step_up=step_up_of(request),
                )
            except ApprovalInputError as error:
                context["errors"] = form.add_argument_errors(error.errors)
                status = 400
            except ApprovalError as error:  # the one door refused it: say why, change nothing
                context["errors"], status = [str(error)], 409
            else:
                if completion.kind == CompletionKind.PARTIAL:
                    given = completion.approval
                    count = f"{len(given.approvals_counted)} of {given.required_approvals}"
                    messages.success(
                        request,
                        f"Your approval is recorded ({count}): {approval.title} waits for another reviewer.",
                    )
                else:
                    messages.success(request, f"{DECIDED_WORDS[decision]}: {approval.title}")
                return redirect("console:run", run_id=approval.run_id)
        else:
            status = 400
    run = approval.run
    context |= {"run": run, "parent": run.parent, "messages_list": conversation_of(run)}
    return render(request, "console/approval.html", context, status=status)


def step_up_of(request) -> StepUp | None:
    """The passkey's answer a decision's form brought, if any (``approvals.step_up``)."""
    credential = request.POST.get("step_up", "")
    return StepUp(credential=credential, party=RelyingParty.of(request)) if credential else None


@login_required
@require_POST
def approval_step_up(request: HttpRequest, approval_id: UUID) -> HttpResponse:
    """The challenge for the reviewer's passkey to confirm one decision on one approval (JSON),
    offered only to a reviewer who may take that decision."""
    membership, reviewer = _context(request)
    if membership is None or reviewer is None:
        return JsonResponse({"error": "you are not a reviewer of this tenant"}, status=403)
    try:
        approval = approval_get_for_tenant(membership.tenant, approval_id)
    except ApprovalError:
        return JsonResponse({"error": "there is no such approval"}, status=404)
    decision = request.POST.get("decision", "")
    if decision not in approval.decisions_offered:
        return JsonResponse({"error": f"choose one of: {', '.join(approval.decisions_offered)}"}, status=400)
    if (refusal := can_decide(reviewer, approval, user=request.user)) is not None:
        return JsonResponse({"error": f"you can't decide this: {refusal.reason}"}, status=403)
    try:
        options = begin(request.user, approval, decision, RelyingParty.of(request))
    except PasskeyError as error:
        return JsonResponse({"error": str(error)}, status=400)
    return HttpResponse(options, content_type="application/json")


@login_required
def approval_panel(request: HttpRequest, approval_id: UUID) -> HttpResponse:
    """The page's decision panel as it stands now: fetched again when the approval is decided
    elsewhere or reaches its expiry, so an open page never offers a decision that is gone."""
    membership, reviewer = _context(request)
    if membership is None:
        return _not_ready(request, membership, reviewer)
    context = _approval_context(request, membership, reviewer, approval_id)
    if context is None:
        return HttpResponse(status=404)
    return render(request, "console/approval.html#decision-panel", context)


@login_required
@require_POST
def bulk_decide(request: HttpRequest) -> HttpResponse:
    """Decide several pending approvals at once, after a confirmation that lists exactly the calls
    (with their arguments) that will be decided; each is then its own decision and audit record."""
    membership, reviewer = _context(request)
    if (refusal := _not_ready(request, membership, reviewer)) is not None:
        return refusal
    decision = request.POST.get("decision")
    rationale = request.POST.get("rationale", "").strip()
    try:
        ids = [UUID(value) for value in request.POST.getlist("approval")]
    except ValueError:
        reason = "Every selected approval must be an approval's id; one of them is not."
        return render(request, "console/bad_request.html", {"reason": reason}, status=400)
    if decision not in BULK_DECISIONS:
        return render(
            request, "console/bad_request.html", {"reason": "Choose approve or reject."}, status=400
        )
    if not ids:
        messages.error(request, "Select at least one approval.")
        return redirect("console:queue")
    if decision == "reject" and not rationale:
        messages.error(request, "A rejection needs a rationale: nothing was rejected.")
        return redirect("console:queue")
    if request.POST.get("confirmed") != "yes":
        chosen = list(
            Approval.objects.filter(tenant=membership.tenant, pk__in=ids)
            .order_by("-created_at")
            .only(
                "id",
                "tool_key",
                "tool_version",
                "agent_key",
                "flow_key",
                "node_id",
                "arguments",
                "created_at",
            )
        )
        context = {"decision": decision, "rationale": rationale, "chosen": chosen, "reviewer": reviewer}
        return render(request, "console/bulk_confirm.html", context)
    outcomes = decide_each(
        acting_user=request.user,
        decisions=[{"approvalId": pk, "decision": decision, "rationale": rationale} for pk in ids],
    )
    failed = [str(outcome) for _, outcome in outcomes if isinstance(outcome, DomainError)]
    done = len(outcomes) - len(failed)
    if done:
        messages.success(request, f"{DECIDED_WORDS[decision]} {done} approval(s).")
    for reason in failed:
        messages.error(request, reason)
    return redirect("console:queue")


@login_required
def insight(request: HttpRequest) -> HttpResponse:
    """How the tenant's people decide, for its reviewers: numbers and one chart, no reading."""
    membership, reviewer = _context(request)
    if (refusal := _not_ready(request, membership, reviewer)) is not None:
        return refusal
    days = request.GET.get("days", "30")
    if days not in WINDOWS:
        days = "30"
    found = decision_insight(membership.tenant, days=WINDOWS[days], now=timezone.now())
    context = {
        "insight": found,
        "columns": charts.columns(found.buckets),
        "chart": {
            "width": charts.CHART_WIDTH,
            "height": charts.CHART_HEIGHT,
            "base": charts.CHART_HEIGHT - charts.LABEL_ROOM,
        },
        "days": days,
        "windows": list(WINDOWS),
        "reviewer": reviewer,
    }
    return render(request, "console/insight.html", context)


@login_required
def notification_settings(request: HttpRequest) -> HttpResponse:
    """How the signed-in reviewer hears of approvals: a mail each, a digest, or none."""
    membership, reviewer = _context(request)
    if (refusal := _not_ready(request, membership, reviewer)) is not None:
        return refusal
    errors, status = [], 200
    if request.method == "POST":
        minutes = request.POST.get("digest_minutes", "")
        try:
            check_set_notifications(
                acting_user=request.user,
                notify=request.POST.get("notify", ""),
                digest_minutes=int(minutes) if minutes.strip().isdigit() else minutes,
            )
        except ApprovalInputError as error:
            errors, status = [line.split(": ", 1)[-1] for line in error.errors], 400
        else:
            messages.success(request, "Saved: how you hear of approvals.")
            return redirect("console:notifications")
        reviewer.refresh_from_db()
    return render(
        request,
        "console/notifications.html",
        {
            "reviewer": reviewer,
            "choices": Reviewer.Notify.choices,
            "errors": errors,
            "email": request.user.email,
        },
        status=status,
    )
