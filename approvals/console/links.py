"""The page a decision link opens: it shows the call and asks; only its form's POST decides.

Link scanners and mail previews fetch links; a GET here decides nothing. The POST carries the
page's CSRF token and decides through ``approvals.links.use_link``, as the link's person.
"""

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from approvals.actions.decisions import CompletionKind
from approvals.console.views import step_up_of
from approvals.exceptions import ApprovalError, ApprovalInputError
from approvals.links import LinkNotValidError, live_link, use_link
from approvals.models import Reviewer
from approvals.permissions import can_decide
from approvals.step_up import begin, needs_step_up
from core.errors import DomainError
from tenants.passkeys import PasskeyError, RelyingParty
from tools.mcp.definitions import tool_for_tenant

WORDS = {"approve": "Approve", "reject": "Reject", "request_changes": "Request changes to"}


@never_cache
@require_http_methods(["GET", "POST"])
def decision_link(request: HttpRequest, token: str) -> HttpResponse:
    try:
        live = live_link(token)
    except LinkNotValidError as error:
        return render(request, "console/decision_link.html", {"dead": str(error)}, status=410)
    approval, link = live.approval, live.link
    tool = tool_for_tenant(approval.tool_key, approval.tool_version, approval.tenant_id)
    context = {
        "approval": approval,
        "action": link.action,
        "word": WORDS[link.action],
        "person": link.user.get_full_name() or link.user.get_username(),
        "tool": tool,
        "errors": [],
        "rationale": "",
        "step_up": needs_step_up(approval),
        "token": token,
    }
    status = 200
    reviewer = Reviewer.objects.filter(user=link.user).first()
    if (refusal := can_decide(reviewer, approval, user=link.user)) is not None:
        # Not theirs to decide any more (an escalation raised the role, say): no form to offer.
        context["refused"] = refusal.reason
        return render(request, "console/decision_link.html", context, status=409)
    if request.method == "POST":
        rationale = request.POST.get("rationale", "")
        context["rationale"] = rationale
        try:
            completion = use_link(token, rationale=rationale, step_up=step_up_of(request))
        except ApprovalInputError as error:
            context["errors"] = [line.replace("/rationale: ", "Rationale: ") for line in error.errors]
            status = 400
        except LinkNotValidError as error:
            return render(request, "console/decision_link.html", {"dead": str(error)}, status=410)
        except (ApprovalError, DomainError) as error:  # the decision rights refused it: say why
            context["errors"], status = [str(error)], 409
        else:
            context |= {
                "approval": completion.approval,
                "done": completion.approval.status,
                "decision": completion.decision,
                "partial": completion.kind == CompletionKind.PARTIAL,
            }
    return render(request, "console/decision_link.html", context, status=status)


@never_cache
@require_POST
def decision_link_step_up(request: HttpRequest, token: str) -> HttpResponse:
    """The challenge for the link's person's passkey to confirm the link's decision (JSON)."""
    try:
        live = live_link(token)
    except LinkNotValidError as error:
        return JsonResponse({"error": str(error)}, status=410)
    approval, link = live.approval, live.link
    reviewer = Reviewer.objects.filter(user=link.user).first()
    if (refusal := can_decide(reviewer, approval, user=link.user)) is not None:
        return JsonResponse({"error": f"you can't decide this any more: {refusal.reason}"}, status=409)
    try:
        options = begin(link.user, approval, link.action, RelyingParty.of(request))
    except PasskeyError as error:
        return JsonResponse({"error": str(error)}, status=400)
    return HttpResponse(options, content_type="application/json")
