import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from tenants.models import ApiToken
from tenants.tokens import do_revoke_token

from .conftest import client_for

pytestmark = pytest.mark.django_db

ENDPOINTS = [
    ("get", "/api/v1/runs"),
    ("post", "/api/v1/runs"),
    ("get", "/api/v1/runs/00000000-0000-0000-0000-000000000000"),
    ("get", "/api/v1/runs/00000000-0000-0000-0000-000000000000/journal"),
    ("post", "/api/v1/runs/00000000-0000-0000-0000-000000000000/cancel"),
    ("get", "/api/v1/approvals"),
    ("get", "/api/v1/approvals/00000000-0000-0000-0000-000000000000"),
    ("post", "/api/v1/approvals/00000000-0000-0000-0000-000000000000/complete"),
    ("get", "/api/v1/reviewers"),
    ("post", "/api/v1/reviewers/register"),
    ("get", "/api/v1/reviewers/me"),
    ("get", "/api/v1/approval-rules"),
    ("get", "/api/v1/approval-rules/1"),
    ("get", "/api/v1/tools"),
    ("get", "/api/v1/tools/my-pack.greet"),
    ("get", "/api/v1/agents"),
    ("get", "/api/v1/agents/acme-ops.status-agent"),
    ("get", "/api/v1/flows"),
    ("get", "/api/v1/flows/my-pack.echo-flow"),
]


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_every_endpoint_needs_a_valid_token(method, path, ada):
    anonymous = getattr(APIClient(), method)(path, {}, format="json")
    assert anonymous.status_code == 401
    assert anonymous.json()["error"]["code"] == "unauthenticated"
    assert anonymous["WWW-Authenticate"] == 'Bearer realm="kindgi"'
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION="Bearer kgi_deadbeef_not-a-token")
    refused = getattr(wrong, method)(path, {}, format="json")
    assert (refused.status_code, refused.json()["error"]["message"]) == (
        401,
        "the API token is not valid, or it was revoked",
    )


@pytest.mark.parametrize(("method", "path"), ENDPOINTS)
def test_a_user_of_no_tenant_is_refused_everywhere(method, path):
    loner = client_for(get_user_model().objects.create_user(username="loner"))
    response = getattr(loner, method)(path, {}, format="json")
    assert response.status_code == 403
    assert (
        response.json()["error"]["message"] == "you belong to no tenant; ask an admin to add them to one"
        or "no tenant" in response.json()["error"]["message"]
    )


def test_a_revoked_token_stops_working(api):
    assert api.get("/api/v1/tools").status_code == 200
    do_revoke_token(ApiToken.objects.get())
    assert api.get("/api/v1/tools").status_code == 401


def test_a_session_works_too(ada, client):
    client.force_login(ada)
    assert client.get("/api/v1/tools").status_code == 200
