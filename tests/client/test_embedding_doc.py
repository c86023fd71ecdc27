"""docs/embedding.md as written, against a live `kindgi dev`: its client blocks (```` ```python
live ````) run in order, in one namespace, with only KINDGI_URL and KINDGI_TOKEN set; its
webhook receivers (```` ```python receiver ````) are given what the server really delivered. The
FastAPI handler is served on loopback as the tenant's webhook; the Django view is handed the
deliveries it received."""

import base64
import os
import re
import threading
import time

import pytest
import uvicorn
from django.test import RequestFactory

from tests.live_server import ROOT, free_port

DOCUMENT = ROOT / "docs" / "embedding.md"
FENCE = re.compile(r"^```python (live|receiver)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def blocks(kind: str) -> list[str]:
    return [code for found, code in FENCE.findall(DOCUMENT.read_text()) if found == kind]


def recording(app, deliveries: list):
    """``app``, with each request's headers and raw body kept before it is handed on."""

    async def asgi(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        signed = {k.decode(): v.decode() for k, v in scope["headers"] if k.startswith(b"webhook-")}
        deliveries.append((signed, body))
        given = False

        async def again():
            nonlocal given
            if given:
                return await receive()
            given = True
            return {"type": "http.request", "body": body, "more_body": False}

        return await app(scope, again, send)

    return asgi


@pytest.fixture
def webhook_secret(monkeypatch):
    secret = "whsec_" + base64.b64encode(os.urandom(32)).decode()
    monkeypatch.setenv("KINDGI_WEBHOOK_SECRET", secret)
    return secret


@pytest.fixture
def fastapi_receiver(dev_server, webhook_secret):
    """The document's FastAPI handler served on loopback, set as the tenant's webhook."""
    fastapi_app = blocks("receiver")[1]
    namespace = {"__name__": "receiver"}
    exec(compile(fastapi_app, "embedding.md: FastAPI", "exec"), namespace)
    deliveries: list = []
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            recording(namespace["app"], deliveries),
            host="127.0.0.1",
            port=port,
            lifespan="off",
            log_level="warning",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    dev_server.django(
        "from approvals.actions.webhooks import check_save_webhook\n"
        "from approvals.models import Webhook\n"
        "from django.contrib.auth import get_user_model\n"
        "from tenants.models import Tenant\n"
        "tenant = Tenant.objects.get(slug='default')\n"
        "webhook = Webhook.objects.filter(tenant=tenant).first() or Webhook(tenant=tenant)\n"
        f"webhook.url, webhook.secret, webhook.previous_secret = 'http://127.0.0.1:{port}/kindgi/webhook', "
        f"{webhook_secret!r}, ''\n"
        "check_save_webhook(webhook, acting_user=get_user_model().objects.get(username='admin'), "
        "surface='command')\n"
    )
    yield deliveries
    server.should_exit = True
    thread.join(timeout=10)


def test_the_embedding_guide_runs_as_written(dev, fastapi_receiver, monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("KINDGI_URL", dev[0])
    monkeypatch.setenv("KINDGI_TOKEN", dev[1])
    monkeypatch.setenv("KINDGI_CONFIG", str(tmp_path / "none.json"))
    namespace = {"__name__": "embedding"}
    code = blocks("live")
    assert len(code) >= 7
    for number, block in enumerate(code, 1):
        exec(compile(block, f"embedding.md: block {number}", "exec"), namespace)
    said = capsys.readouterr().out
    assert "shipped\n" in said
    assert 'Post "Checkout is back to normal." to the public status page\n' in said
    assert "invalid_input ['/input/orderId: Field required'" in said

    # The decision reached the FastAPI handler, verified, as approval.decided.
    deadline = time.monotonic() + 30
    while b'"approval.decided"' not in b"".join(body for _, body in fastapi_receiver):
        assert time.monotonic() < deadline, fastapi_receiver
        time.sleep(0.1)
    time.sleep(0.2)
    said += capsys.readouterr().out
    assert "acme-ops.post-update: approved by Dev Admin\n" in said

    # The Django view, given the same deliveries: each verified, a decision handled once.
    django_view = blocks("receiver")[0]
    view_namespace = {"__name__": "receiver"}
    exec(compile(django_view, "embedding.md: Django", "exec"), view_namespace)
    view = view_namespace["kindgi_webhook"]
    factory = RequestFactory()
    for headers, body in fastapi_receiver + fastapi_receiver:
        request = factory.post("/kindgi/webhook", data=body, content_type="application/json", headers=headers)
        assert view(request).status_code == 204
    assert capsys.readouterr().out.count("acme-ops.post-update: approved by Dev Admin\n") == 1

    headers, body = next((h, b) for h, b in fastapi_receiver if b'"approval.decided"' in b)
    changed = body.replace(b"approved", b"rejected")
    forged = factory.post("/kindgi/webhook", data=changed, content_type="application/json", headers=headers)
    answer = view(forged)
    assert (answer.status_code, answer.content) == (
        400,
        b"no signature matches: another secret, or a body that was changed",
    )
