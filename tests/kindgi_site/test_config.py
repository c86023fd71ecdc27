import os
import re
import subprocess
import sys

import pytest
from django.core.exceptions import ImproperlyConfigured

from kindgi_site.config import Environment
from tests.live_server import ROOT


def env(**values) -> Environment:
    return Environment(values)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"KINDGI_DEBUG": "maybe"}, "KINDGI_DEBUG must be true or false, not 'maybe'"),
        ({"KINDGI_TASKS": "sqs"}, "KINDGI_TASKS must be one of immediate, db, rq, celery, not 'sqs'"),
        ({"KINDGI_TASKS": "celery"}, "KINDGI_TASKS=celery queues runs in Redis: set REDIS_URL"),
        (
            {"DATABASE_URL": "mysql://db/kindgi"},
            "DATABASE_URL must be a postgres:// (or sqlite://) URL, not one for 'mysql'",
        ),
        ({"REDIS_URL": "http://cache:6379"}, "REDIS_URL must be a redis:// URL, not 'http://cache:6379'"),
        ({"KINDGI_HSTS_SECONDS": "a year"}, "KINDGI_HSTS_SECONDS must be a whole number, not 'a year'"),
        (
            {"KINDGI_TRUSTED_PROXIES": "10.0.0.0/8, the-proxy"},
            "KINDGI_TRUSTED_PROXIES must list addresses or CIDRs (like 10.0.0.0/8), not 'the-proxy'",
        ),
    ],
)
def test_bad_values_are_named(values, message):
    with pytest.raises(ImproperlyConfigured, match=re.escape(message)):
        read_everything(env(**values))


def read_everything(environment: Environment) -> None:
    environment.boolean("KINDGI_DEBUG", True)
    environment.tasks()
    environment.database({})
    environment.channel_layers()
    environment.integer("KINDGI_HSTS_SECONDS", 1)
    environment.networks("KINDGI_TRUSTED_PROXIES")


def test_production_needs_a_strong_secret_key():
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY must be set"):
        env().secret_key(debug=False)
    with pytest.raises(ImproperlyConfigured, match="at least 50 random characters"):
        env(SECRET_KEY="short").secret_key(debug=False)
    assert env().secret_key(debug=True).startswith("django-insecure")


def test_what_the_environment_selects():
    chosen = env(
        DATABASE_URL="postgres://kindgi:pw@db:5432/kindgi",
        REDIS_URL="redis://cache:6379/1",
        KINDGI_TASKS="db",
    )
    database = chosen.database({})
    assert (database["ENGINE"], database["NAME"], database["HOST"], database["CONN_MAX_AGE"]) == (
        "django.db.backends.postgresql",
        "kindgi",
        "db",
        0,
    )
    assert database["OPTIONS"]["pool"] == {"min_size": 1, "max_size": 20, "timeout": 10}
    unpooled = env(DATABASE_URL="postgres://kindgi:pw@db:5432/kindgi", KINDGI_DB_POOL_SIZE="0").database({})
    assert unpooled["CONN_MAX_AGE"] == 60
    assert "pool" not in unpooled.get("OPTIONS", {})
    assert chosen.channel_layers()["default"]["CONFIG"] == {"hosts": ["redis://cache:6379/1"]}
    assert chosen.tasks()["default"]["BACKEND"] == "django_tasks_db.DatabaseBackend"
    embedded = env()
    assert embedded.channel_layers()["default"]["BACKEND"] == "channels.layers.InMemoryChannelLayer"
    assert embedded.tasks()["default"]["BACKEND"].endswith("ImmediateBackend")


PRODUCTION = {
    "KINDGI_DEBUG": "false",
    "SECRET_KEY": "k" * 20 + "a-real-deployment-uses-50-random-characters-here",
    "ALLOWED_HOSTS": "kindgi.example.com",
    "KINDGI_HSTS_PRELOAD": "true",
    "KINDGI_ENCRYPTION_KEY": "0" * 43 + "=",
}


def manage(*arguments, **environment):
    return subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env=os.environ | environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_passes_with_the_documented_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_bad_value_stops_start_up_with_a_clear_error():
    result = manage("check", KINDGI_TASKS="sqs")
    assert result.returncode != 0
    assert "KINDGI_TASKS must be one of immediate, db, rq, celery, not 'sqs'" in result.stderr


def test_production_cookies_are_secure_and_http_only():
    script = (
        "from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_SECURE, s.SESSION_COOKIE_HTTPONLY, s.CSRF_COOKIE_SECURE, "
        "s.SECURE_HSTS_SECONDS > 0)"
    )
    result = manage("shell", "-c", script, **PRODUCTION)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1].split() == ["True", "True", "True", "True"]


def test_a_queue_in_redis_needs_its_library_and_says_which_extra_brings_it(monkeypatch):
    import importlib.util

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "django_tasks_rq" else real_find_spec(name, *rest),
    )
    with pytest.raises(
        ImproperlyConfigured,
        match=re.escape("KINDGI_TASKS=rq needs django-tasks-rq: pip install 'kindgi[rq]'"),
    ):
        env(KINDGI_TASKS="rq", REDIS_URL="redis://127.0.0.1:6379/0").tasks()


def test_a_queue_in_redis_is_configured_for_its_library():
    rq = env(KINDGI_TASKS="rq", REDIS_URL="redis://cache:6379/2")
    assert rq.tasks()["default"]["BACKEND"] == "django_tasks_rq.RQBackend"
    assert rq.queue_settings()["RQ_QUEUES"]["default"]["URL"] == "redis://cache:6379/2"
    celery = env(KINDGI_TASKS="celery", REDIS_URL="redis://cache:6379/2")
    assert celery.tasks()["default"]["OPTIONS"] == {"CELERY_APP": "kindgi_site.celery.app"}
    assert celery.queue_settings()["CELERY_BROKER_URL"] == "redis://cache:6379/2"
    assert celery.queue_settings()["CELERY_WORKER_DISABLE_PREFETCH"] is True
