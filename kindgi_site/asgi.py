"""ASGI entry point for daphne: HTTP, and WebSockets for live run progress."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kindgi_site.settings")
django.setup(set_prefix=False)

from core.asgi import LimitedASGIHandler  # noqa: E402  (needs Django set up first)
from core.socket_auth import OriginValidatorUnlessToken  # noqa: E402

# Django's handler, holding request bodies to the limit whether or not they say their length.
django_asgi_app = LimitedASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from kindgi_site.mcp.endpoint import endpoint as mcp_endpoint  # noqa: E402
from kindgi_site.routing import websocket_urlpatterns  # noqa: E402
from tools.mcp.refresher import start_refresher  # noqa: E402

start_refresher()

# daphne serves no static files of its own; in development Django's finders do.
django_http = ASGIStaticFilesHandler(django_asgi_app) if settings.DEBUG else django_asgi_app


async def http_application(scope, receive, send):
    """Django for every path but ``/mcp``, which the MCP SDK's streamable HTTP transport serves."""
    if scope["path"].rstrip("/") == "/mcp":
        await mcp_endpoint(scope, receive, send)
    else:
        await django_http(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": http_application,
        # Browsers must come from an allowed host (a token client may send no Origin); the
        # consumer then checks the session or the token, and keeps checking while it is open.
        "websocket": OriginValidatorUnlessToken(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
