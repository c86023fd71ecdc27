"""The console's Grants page: the standing grants a reviewer gave (a tenant admin: every grant of
the tenant), their use, and revoking one."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from approvals.actions.grants import check_revoke_grant, grants_visible_to
from approvals.exceptions import ApprovalError
from approvals.models import Reviewer
from audit.models import Surface
from tenants.exceptions import ConfigurationForbiddenError

SHOWN = 200


@login_required
def grants_page(request: HttpRequest) -> HttpResponse:
    membership = getattr(request.user, "membership", None)
    if membership is None:
        return render(request, "console/not_a_reviewer.html", {"membership": None}, status=403)
    now = timezone.now()
    grants = list(grants_visible_to(request.user, membership.tenant)[:SHOWN])
    for grant in grants:
        grant.status = grant.status_at(now)
    reviewer = Reviewer.objects.filter(user=request.user, tenant=membership.tenant).first()
    context = {"grants": grants, "is_reviewer": reviewer is not None, "reviewer": reviewer}
    return render(request, "console/grants.html", context)


@login_required
@require_POST
def revoke(request: HttpRequest, grant_id: int) -> HttpResponse:
    membership = getattr(request.user, "membership", None)
    if membership is None:
        return render(request, "console/not_a_reviewer.html", {"membership": None}, status=403)
    try:
        grant = check_revoke_grant(
            grant_id=grant_id, tenant=membership.tenant, acting_user=request.user, surface=Surface.CONSOLE
        )
    except (ApprovalError, ConfigurationForbiddenError) as error:
        messages.error(request, f"Nothing was revoked: {error}")
    else:
        messages.success(request, f"Revoked grant {grant.pk}: it covers no call from now on.")
    return redirect("console:grants")
