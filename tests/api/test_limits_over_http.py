"""Request bodies over the limit, through a real daphne process: 413 with the API's error body,
whether the body says its length or comes in chunks; a chunked body within the limit is read."""

import json

import httpx
import pytest
from django.db import connection

from runs.models import Run
from tenants.tokens import do_create_token
from tests.factories import reviewer
from tests.live_server import LiveServer, database_env

pytestmark = pytest.mark.django_db(transaction=True)
LIMIT = 4096


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    environment = database_env(connection) | {"KINDGI_MAX_REQUEST_BYTES": str(LIMIT)}
    with django_db_blocker.unblock(), LiveServer(environment) as live:
        yield live


@pytest.fixture
def http(server):
    _, token = do_create_token(user=reviewer("ada"))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=30) as client:
        yield client


def body(size: int) -> bytes:
    return json.dumps(
        {"flowId": "my-pack.check-order", "input": {"orderId": "ord_1001", "pad": "x" * size}}
    ).encode()


def chunks(data: bytes):
    for start in range(0, len(data), 1000):
        yield data[start : start + 1000]


@pytest.mark.parametrize("chunked", [False, True], ids=["with a length", "chunked"])
def test_a_body_over_the_limit_is_413_json(http, chunked):
    data = body(3 * LIMIT)
    response = http.post("/api/v1/runs", content=chunks(data) if chunked else data)
    assert response.status_code == 413
    assert response.headers["content-type"].startswith("application/json")
    assert response.json() == {
        "error": {
            "code": "too_large",
            "message": f"the request body is larger than the limit of {LIMIT} bytes",
            "details": {},
        }
    }
    assert not Run.objects.exists()


def test_a_chunked_body_within_the_limit_is_read(http):
    data = json.dumps(
        {"flowId": "my-pack.check-order", "input": {"orderId": "ord_1001"}, "dryRun": True}
    ).encode()
    response = http.post("/api/v1/runs", content=chunks(data))
    assert response.status_code == 201, response.text
    assert response.json()["status"] == "completed"
