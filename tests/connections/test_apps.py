"""Apps from KINDGI_CONNECTION_APPS: rows after migrate, checked, turned off when dropped."""

import pytest
from django.test import override_settings

from connections.actions import do_sync_settings_apps
from connections.models import App
from tests.factories import default_tenant

pytestmark = pytest.mark.django_db

TRACKER = {
    "name": "tracker",
    "displayName": "Tracker",
    "authorizeUrl": "https://tracker.example/oauth/authorize",
    "tokenUrl": "https://tracker.example/oauth/token",
    "scopes": ["issues:read", "issues:write"],
    "clientId": "kindgi",
    "clientSecretEnv": "TRACKER_CLIENT_SECRET",
    "apiBaseUrl": "https://tracker.example/api",
}


def test_the_readmes_example_becomes_an_app_for_every_tenant_and_leaves_when_dropped():
    with override_settings(KINDGI_CONNECTION_APPS=[TRACKER]):
        assert do_sync_settings_apps() == 1
    app = App.objects.get(name="tracker")
    assert (app.tenant, app.source, app.enabled) == (None, "settings", True)
    assert app.client_secret_env == "TRACKER_CLIENT_SECRET"
    with override_settings(KINDGI_CONNECTION_APPS=[]):
        do_sync_settings_apps()
    assert App.objects.get(name="tracker").enabled is False


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ({**TRACKER, "clientSecret": "s3cret"}, r"unknown field\(s\) clientSecret"),
        ({k: v for k, v in TRACKER.items() if k != "tokenUrl"}, "missing tokenUrl"),
        ({**TRACKER, "name": "Tracker App"}, "Lowercase letters, digits and dashes"),
        ({**TRACKER, "name": "mailbox"}, "'mailbox' is Kindgi's own"),
    ],
    ids=["a secret in the setting", "no token URL", "not a name", "Kindgi's own app"],
)
def test_a_wrong_entry_is_refused_naming_what(config, says):
    with override_settings(KINDGI_CONNECTION_APPS=[config]), pytest.raises(ValueError, match=says):
        do_sync_settings_apps()
    assert not App.objects.exists()


def test_a_setting_may_not_take_a_tenants_app_name():
    App.objects.create(
        name="tracker",
        tenant=default_tenant(),
        authorize_url="https://t.example/a",
        token_url="https://t.example/t",
        client_id="x",
        api_base_url="https://t.example/api",
    )
    with (
        override_settings(KINDGI_CONNECTION_APPS=[TRACKER]),
        pytest.raises(ValueError, match="a tenant's app"),
    ):
        do_sync_settings_apps()
