from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render

from tools.selectors import catalog_summary, mcp_server_health


def home(request: HttpRequest) -> HttpResponse:
    return render(request, "home.html", {"catalog": catalog_summary()})


def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up."""
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> JsonResponse:
    """The database and the channel layer answer; 503 naming the one that does not."""
    checks = {"database": _database_answers, "channelLayer": _channel_layer_answers}
    results = {}
    for name, check in checks.items():
        try:
            check()
            results[name] = "ok"
        except Exception as error:  # whatever broke, say so and stay down
            results[name] = f"failing: {type(error).__name__}"
    ready = all(result == "ok" for result in results.values())
    body = {"status": "ok" if ready else "unavailable", **results}
    if ready and (servers := mcp_server_health()) is not None:
        body["mcpServers"] = servers  # a detail: a server that does not answer leaves Kindgi ready
    return JsonResponse(body, status=200 if ready else 503)


def _database_answers() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _channel_layer_answers() -> None:
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.send)(channel, {"type": "readyz.ping"})
    async_to_sync(layer.receive)(channel)


FAVICON = (settings.BASE_DIR / "static" / "kindgi" / "favicon.svg").read_bytes()


def favicon(request: HttpRequest) -> HttpResponse:
    """What browsers ask for at /favicon.ico, whatever the page's <link> says."""
    response = HttpResponse(FAVICON, content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response
