from django.conf import settings
from django.contrib import admin
from django.urls import include, path, re_path
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from kindgi_site import metrics, views
from kindgi_site.api.errors import endpoint_not_found
from mail import inbound
from tenants.signin import admin_sign_in

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("readyz", views.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="metrics"),
    # The admin's sign-in, behind the console's limiter (before the admin's own URLs).
    path("admin/login/", admin_sign_in, name="admin-login"),
    path("admin/", admin.site.urls),
    path("console/", include("kindgi_site.console_urls")),
    # A mail provider's inbound webhook (Mailgun's, its signature checked by anymail).
    path("mail/inbound/mailgun/", inbound.mailgun_inbound, name="mail-inbound-mailgun"),
    path("api/v1/", include(("kindgi_site.api.urls", "api"), namespace="api")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path(
        "api/docs/",
        # Swagger UI styles its elements inline; its script is served apart (the split view).
        csp_override({**settings.SECURE_CSP, "style-src": [CSP.SELF, CSP.UNSAFE_INLINE]})(
            SpectacularSwaggerSplitView.as_view(url_name="api-schema")
        ),
        name="api-docs",
    ),
    # Any other path under /api/ (/api/, /api/v2/…) names no endpoint: the API's JSON 404.
    re_path(r"^api/(?P<path>[\s\S]*)$", endpoint_not_found),
]
