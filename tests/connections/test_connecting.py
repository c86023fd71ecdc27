"""Connecting an app against a real OAuth 2 server on loopback (tests/oauth_server.py): the
authorization-code flow with PKCE, tokens sealed at rest and never shown, refresh, revocation."""

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from connections.actions import do_fresh_access_token
from connections.clients import authorised_client
from connections.crypto import unseal
from connections.exceptions import ConnectionUnusableError
from connections.models import Connection
from tenants.tokens import do_create_token
from tests.factories import member, other_tenant

pytestmark = pytest.mark.django_db(transaction=True)


def api_for(user) -> APIClient:
    _, token = do_create_token(user=user)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    return api


def browser_of(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def start(api, app="tracker") -> dict:
    response = api.post("/api/v1/connections", {"app": app}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def answer_path(location: str) -> str:
    parts = urlsplit(location)
    return f"{parts.path}?{parts.query}"


def connect(user, oauth_server) -> Connection:
    """Ada connects the tracker, the whole way: API, the app's consent page, Kindgi's callback."""
    started = start(api_for(user))
    back = oauth_server.consent(started["authorizeUrl"])
    finished = browser_of(user).get(answer_path(back))
    assert finished.status_code == 302
    return Connection.objects.get(pk=started["id"])


def test_the_authorization_code_flow_with_pkce_end_to_end(tracker, oauth_server):
    ada = member("ada")
    api = api_for(ada)
    started = start(api)
    assert started["status"] == "pending"
    query = parse_qs(urlsplit(started["authorizeUrl"]).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["client_id"] == ["kindgi-test"]
    assert query["scope"] == ["issues:read issues:write"]
    assert query["redirect_uri"] == ["http://testserver/console/connections/callback/"]

    back = oauth_server.consent(started["authorizeUrl"])
    assert back.startswith("http://testserver/console/connections/callback/?")
    page = browser_of(ada).get(answer_path(back), follow=True)
    assert "Connected Tracker." in page.text

    connection = Connection.objects.get(pk=started["id"])
    assert connection.status == "active"
    assert connection.scopes == ["issues:read", "issues:write"]
    # Sealed at rest: the database holds no token as it is.
    plain = unseal(connection.access_token)
    assert plain
    assert plain not in connection.access_token
    with authorised_client(connection) as client:
        assert client.get("/me").json()["user"] == "ada@test-app"

    listed = api.get("/api/v1/connections").json()["items"]
    assert [(c["app"], c["status"]) for c in listed] == [("tracker", "active")]
    shown = (
        api.get("/api/v1/connections").content.decode() + browser_of(ada).get("/console/connections/").text
    )
    assert plain not in shown
    assert unseal(connection.refresh_token) not in shown


def test_an_answer_to_someone_elses_authorization_attaches_nothing(tracker, oauth_server):
    ada, eve = member("ada"), member("eve")
    started = start(api_for(ada))
    back = oauth_server.consent(started["authorizeUrl"])
    page = browser_of(eve).get(answer_path(back), follow=True)
    assert "matches no connection you started" in page.text
    assert Connection.objects.get(pk=started["id"]).status == "pending"
    assert not Connection.objects.filter(owner=eve).exists()


def test_a_person_who_denies_gets_no_connection_and_is_told(tracker, oauth_server):
    ada = member("ada")
    started = start(api_for(ada))
    back = oauth_server.consent(started["authorizeUrl"], answer="deny")
    page = browser_of(ada).get(answer_path(back), follow=True)
    assert "the app did not grant it: access_denied" in page.text
    connection = Connection.objects.get(pk=started["id"])
    assert connection.status == "revoked"
    assert connection.access_token == ""


def test_an_expired_access_token_is_refreshed_and_written_back(tracker, oauth_server):
    connection = connect(member("ada"), oauth_server)
    first = connection.access_token
    Connection.objects.filter(pk=connection.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    refreshed_before = oauth_server.control()["stats"]["refreshed"]

    with authorised_client(connection) as client:
        assert client.get("/me").status_code == 200
    connection.refresh_from_db()
    assert oauth_server.control()["stats"]["refreshed"] == refreshed_before + 1
    assert connection.access_token != first
    assert connection.refreshed_at is not None
    assert connection.expires_at > timezone.now()
    # The next use needs no refresh.
    do_fresh_access_token(connection.pk)
    assert oauth_server.control()["stats"]["refreshed"] == refreshed_before + 1


def test_a_revoked_grant_ends_the_connection_when_it_must_refresh(tracker, oauth_server):
    connection = connect(member("ada"), oauth_server)
    oauth_server.control(revokeAll=True)
    Connection.objects.filter(pk=connection.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(ConnectionUnusableError, match="invalid_grant"):
        authorised_client(connection)
    connection.refresh_from_db()
    assert connection.status == "revoked"
    assert connection.access_token == connection.refresh_token == ""
    assert "invalid_grant" in connection.failure


def test_disconnecting_forgets_the_tokens_and_only_the_owner_may(tracker, oauth_server):
    ada = member("ada")
    connection = connect(ada, oauth_server)
    eve = api_for(member("eve"))
    assert eve.get(f"/api/v1/connections/{connection.pk}").status_code == 404
    assert eve.delete(f"/api/v1/connections/{connection.pk}").status_code == 404
    assert eve.get("/api/v1/connections").json()["items"] == []

    removed = api_for(ada).delete(f"/api/v1/connections/{connection.pk}")
    assert removed.json()["status"] == "revoked"
    connection.refresh_from_db()
    assert connection.access_token == connection.refresh_token == ""


def test_another_tenants_app_cannot_be_connected(tracker):
    theirs = api_for(member("theo", tenant=other_tenant()))
    assert theirs.get("/api/v1/connection-apps").json()["items"] == []
    refused = theirs.post("/api/v1/connections", {"app": "tracker"}, format="json")
    assert refused.status_code == 404
    assert refused.json()["error"]["message"] == "there is no app 'tracker' to connect"


def test_a_start_naming_an_unknown_field_is_refused(tracker):
    refused = api_for(member("ada")).post(
        "/api/v1/connections", {"app": "tracker", "scope": "x"}, format="json"
    )
    assert refused.status_code == 400
    assert "scope" in refused.json()["error"]["message"]
    assert not Connection.objects.exists()
