import json

import pytest
from django.db import connection

from kindgi.cli import main
from tenants.tokens import do_create_token
from tests.factories import member
from tests.live_server import LiveServer, database_env


@pytest.fixture(scope="module")
def server(django_db_setup, django_db_blocker):
    with django_db_blocker.unblock(), LiveServer(database_env(connection)) as live:
        yield live


@pytest.fixture
def user(transactional_db):
    """An admin of the default tenant, not yet a reviewer: the seed registers one (only a tenant
    admin registers reviewers), as `kindgi dev`'s development admin would."""
    return member("ada", tenant_admin=True)


@pytest.fixture
def cli(server, user, monkeypatch, tmp_path, capsys):
    """Run `kindgi …` against the live server as ``user``; return (exit code, stdout, stderr)."""
    _, token = do_create_token(user=user)
    monkeypatch.setenv("KINDGI_URL", server.url)
    monkeypatch.setenv("KINDGI_TOKEN", token)
    monkeypatch.setenv("KINDGI_CONFIG", str(tmp_path / "config.json"))

    def run(*arguments: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(arguments))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def parsed(output: str):
    return json.loads(output)
