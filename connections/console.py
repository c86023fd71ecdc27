"""The console's connections page: connect an app, see each connection's state, disconnect.

The app's answer comes back to ``callback``, which needs the same signed-in person who started
the connection: a link that someone else started matches nothing of yours.
"""

from urllib.parse import urlsplit
from uuid import UUID

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.csp import CSP
from django.views.decorators.http import require_POST

from connections.actions import check_finish_connection, check_start_connection, do_remove_connection
from connections.exceptions import ConnectionError_
from connections.selectors import (
    apps_for_tenant,
    connections_of,
    recent_uses,
    runs_asking_for_yes,
    runs_waiting_for,
)

# The runs shown under each connection: the latest that used it.
USES_SHOWN = 10


def _tenant(request):
    membership = getattr(request.user, "membership", None)
    return membership.tenant if membership else None


@login_required
def connections_page(request: HttpRequest) -> HttpResponse:
    tenant = _tenant(request)
    if tenant is None:
        return render(request, "console/not_a_reviewer.html", {"membership": None}, status=403)
    mine = list(connections_of(request.user).exclude(status="pending")[:100])
    connected = {connection.app_id for connection in mine if connection.status == "active"}
    apps = [(app, app.pk in connected) for app in apps_for_tenant(tenant.pk)]
    labels = {app.name: app.label for app, _ in apps}
    waiting = [
        (run, labels.get(run.waitpoint["app"], run.waitpoint["app"]), run.waitpoint["app"])
        for run in runs_waiting_for(request.user).filter(tenant=tenant).order_by("-created_at")[:50]
    ]
    asking = [
        (run, labels.get(run.waitpoint["app"], run.waitpoint["app"]))
        for run in runs_asking_for_yes(request.user)
        .filter(tenant=tenant)
        .select_related("service")
        .order_by("-created_at")[:50]
    ]
    uses = recent_uses(mine)
    rows = [(connection, uses.get(connection.pk, [])[:USES_SHOWN]) for connection in mine]
    context = {"apps": apps, "connections": rows, "waiting": waiting, "asking": asking}
    response = render(request, "console/connections.html", context)
    # "Connect" posts here, and is sent on to the app: the page's forms may lead there, and only there.
    origins = sorted({_origin(app.authorize_url) for app, _ in apps})
    response._csp_config = {**settings.SECURE_CSP, "form-action": [CSP.SELF, *origins]}
    return response


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@login_required
@require_POST
def connect(request: HttpRequest) -> HttpResponse:
    tenant = _tenant(request)
    if tenant is None:
        return render(request, "console/not_a_reviewer.html", {"membership": None}, status=403)
    try:
        _, url = check_start_connection(
            user=request.user,
            tenant=tenant,
            app_name=request.POST.get("app", ""),
            redirect_uri=request.build_absolute_uri(reverse("console:connection-callback")),
        )
    except ConnectionError_ as error:
        messages.error(request, str(error))
        return redirect("console:connections")
    return redirect(url)


@login_required
def callback(request: HttpRequest) -> HttpResponse:
    try:
        connection = check_finish_connection(
            user=request.user,
            state=request.GET.get("state", ""),
            code=request.GET.get("code", ""),
            error=request.GET.get("error", ""),
        )
    except ConnectionError_ as error:
        messages.error(request, f"Not connected: {error}.")
        return redirect("console:connections")
    messages.success(request, f"Connected {connection.app.label}.")
    return redirect("console:connections")


@login_required
@require_POST
def disconnect(request: HttpRequest, connection_id: UUID) -> HttpResponse:
    try:
        connection = do_remove_connection(user=request.user, connection_id=connection_id)
    except ConnectionError_:
        return render(request, "console/not_found.html", {"what": "connection"}, status=404)
    messages.success(request, f"Disconnected {connection.app.label}.")
    return redirect("console:connections")
