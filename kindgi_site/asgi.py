"""ASGI entry point for daphne: HTTP, and WebSockets for live run progress."""

import os

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kindgi_site.settings")
django.setup(set_prefix=False)

from core.asgi import LimitedASGIHandler  # noqa: E402  (needs Django set up first)

# Django's handler, holding request bodies to the limit whether or not they say their length.
django_asgi_app = LimitedASGIHandler()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs Django set up first)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402
from django.conf import settings  # noqa: E402
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler  # noqa: E402

from kindgi_site.routing import websocket_urlpatterns  # noqa: E402

# daphne serves no static files of its own; in development Django's finders do.
http_application = ASGIStaticFilesHandler(django_asgi_app) if settings.DEBUG else django_asgi_app

application = ProtocolTypeRouter(
    {
        "http": http_application,
        # Browsers must come from an allowed host; the consumer then checks session or token.
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
