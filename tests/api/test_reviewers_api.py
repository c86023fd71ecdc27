import pytest

from tests.api.conftest import client_for
from tests.factories import member

pytestmark = pytest.mark.django_db


def test_register_me_and_list(member_api, api):
    assert member_api.get("/api/v1/reviewers/me").status_code == 403
    refused = member_api.post(
        "/api/v1/reviewers/register", {"role": "standard", "displayName": "Carl"}, format="json"
    )
    assert (refused.status_code, refused.json()["error"]["code"]) == (403, "forbidden")
    assert "only a tenant admin registers a reviewer" in refused.json()["error"]["message"]
    admin_api = client_for(member("tina", tenant_admin=True))
    registered = admin_api.post(
        "/api/v1/reviewers/register", {"role": "standard", "displayName": "Ada Lovelace"}, format="json"
    )
    assert registered.status_code == 200
    assert registered.json() | {"createdAt": None, "updatedAt": None} == {
        "user": "tina",
        "role": "standard",
        "displayName": "Ada Lovelace",
        "tenant": "acme",
        "notify": "immediately",
        "digestMinutes": 15,
        "createdAt": None,
        "updatedAt": None,
        "note": "",
    }
    assert admin_api.get("/api/v1/reviewers/me").json()["displayName"] == "Ada Lovelace"
    names = [r["displayName"] for r in api.get("/api/v1/reviewers").json()["items"]]
    assert sorted(names) == ["Ada", "Ada Lovelace"]


def test_bad_registrations(member_api, outsider_api):
    unknown = member_api.post(
        "/api/v1/reviewers/register", {"role": "boss", "displayName": "X"}, format="json"
    )
    assert unknown.status_code == 400
    assert unknown.json()["error"]["details"]["errors"] == [
        "/role: 'boss' is not a reviewer role (valid roles: standard, senior, admin)"
    ]
    missing = member_api.post("/api/v1/reviewers/register", {"role": "standard"}, format="json")
    assert missing.json()["error"]["details"]["errors"] == ["/displayName: a display name is required"]
    higher = member_api.post(
        "/api/v1/reviewers/register", {"role": "admin", "displayName": "X"}, format="json"
    )
    assert (higher.status_code, higher.json()["error"]["code"]) == (403, "forbidden")
    assert [r["user"] for r in outsider_api.get("/api/v1/reviewers").json()["items"]] == ["eve"]


def test_a_blank_display_name_is_refused(member_api):
    blank = member_api.post(
        "/api/v1/reviewers/register", {"role": "standard", "displayName": ""}, format="json"
    )
    assert blank.status_code == 400
    assert blank.json()["error"]["details"]["errors"] == ["/displayName: a display name is required"]
