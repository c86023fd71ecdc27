"""Secrets at rest: sealed with the site's keys, which rotate; production needs a key of its own."""

import os
import subprocess
import sys

import pytest
from cryptography.fernet import Fernet
from django.test import override_settings

from connections.checks import check_encryption_key
from connections.crypto import SealError, reseal, seal, unseal
from tests.kindgi_site.test_config import PRODUCTION, ROOT

OLD, NEW = Fernet.generate_key().decode(), Fernet.generate_key().decode()


def test_a_sealed_value_opens_only_with_a_configured_key():
    with override_settings(KINDGI_ENCRYPTION_KEY=OLD):
        sealed = seal("tok_1234")
        assert "tok_1234" not in sealed
        assert unseal(sealed) == "tok_1234"
    with override_settings(KINDGI_ENCRYPTION_KEY=NEW), pytest.raises(SealError):
        unseal(sealed)


def test_rotation_a_new_key_in_front_opens_both_and_reseals_with_the_new_one():
    with override_settings(KINDGI_ENCRYPTION_KEY=OLD):
        sealed = seal("tok_1234")
    with override_settings(KINDGI_ENCRYPTION_KEY=f"{NEW},{OLD}"):
        assert unseal(sealed) == "tok_1234"
        resealed = reseal(sealed)
    with override_settings(KINDGI_ENCRYPTION_KEY=NEW):
        assert unseal(resealed) == "tok_1234"


@override_settings(DEBUG=False, KINDGI_ENCRYPTION_KEY="")
def test_e010_production_without_a_key():
    (error,) = check_encryption_key()
    assert error.id == "kindgi.E010"
    assert "KINDGI_ENCRYPTION_KEY is not set" in error.msg


@override_settings(KINDGI_ENCRYPTION_KEY="not-a-key")
def test_e010_a_key_that_is_not_a_fernet_key():
    (error,) = check_encryption_key()
    assert "32 url-safe base64-encoded bytes" in error.msg


def test_a_production_site_without_a_key_fails_its_checks():
    environment = {k: v for k, v in PRODUCTION.items() if k != "KINDGI_ENCRYPTION_KEY"}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "KINDGI_ENCRYPTION_KEY"} | environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "kindgi.E010" in result.stderr


@pytest.mark.django_db
def test_reseal_connections_moves_every_token_to_the_newest_key():
    from django.core.management import call_command

    from connections.models import App, Connection
    from tests.factories import default_tenant, member

    with override_settings(KINDGI_ENCRYPTION_KEY=OLD):
        app = App.objects.create(
            name="tracker",
            tenant=default_tenant(),
            authorize_url="https://apps.example/authorize",
            token_url="https://apps.example/token",
            client_id="kindgi",
            api_base_url="https://apps.example/api",
        )
        connection = Connection.objects.create(
            app=app,
            owner=member("ada"),
            tenant=default_tenant(),
            access_token=seal("a"),
            refresh_token=seal("r"),
        )
    with override_settings(KINDGI_ENCRYPTION_KEY=f"{NEW},{OLD}"):
        call_command("reseal_connections")
    connection.refresh_from_db()
    with override_settings(KINDGI_ENCRYPTION_KEY=NEW):
        assert (unseal(connection.access_token), unseal(connection.refresh_token)) == ("a", "r")
