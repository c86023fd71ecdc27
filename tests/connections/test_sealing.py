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
