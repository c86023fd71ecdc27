from django.urls import include, path, re_path

from kindgi_site.api.errors import endpoint_not_found

urlpatterns = [
    path("", include("runs.api.urls")),
    path("", include("approvals.api.urls")),
    path("", include("tools.api.urls")),
    path("", include("connections.api.urls")),
    path("", include("mail.api.urls")),
    path("", include("audit.api.urls")),
    # Last: any other path under /api/v1/ is a JSON 404, not the site's HTML page. `[\s\S]`, not
    # `.`: a path may hold a newline (`%0A`), which `.` does not match, and the typed routes above
    # end at `\Z`, so an id with a newline in it falls through to here too.
    re_path(r"^(?P<path>[\s\S]*)$", endpoint_not_found),
]
