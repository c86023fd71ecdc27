from django.urls import include, path, re_path

from kindgi_site.api.errors import endpoint_not_found

urlpatterns = [
    path("", include("runs.api.urls")),
    path("", include("approvals.api.urls")),
    path("", include("tools.api.urls")),
    path("", include("connections.api.urls")),
    path("", include("mail.api.urls")),
    path("", include("audit.api.urls")),
    # Last: any other path under /api/v1/ is a JSON 404, not the site's HTML page.
    re_path(r"^(?P<path>.*)$", endpoint_not_found),
]
