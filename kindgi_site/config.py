"""Everything a deployment sets, read from the environment in one place, with clear errors.

Nothing set: the embedded profile (SQLite file, immediate tasks, in-memory channel layer).
"""

import importlib.util
import ipaddress
import json
import os
from collections.abc import Mapping
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured

TASK_QUEUES = ("immediate", "db", "rq", "celery")
# The queues kept in Redis, and the library each needs.
QUEUES_ON_REDIS = {"rq": "django_tasks_rq", "celery": "django_tasks_celery"}


class Environment:
    def __init__(self, values: Mapping[str, str] | None = None):
        self.values = os.environ if values is None else values

    def text(self, name: str, default: str = "") -> str:
        return self.values.get(name, "").strip() or default

    def boolean(self, name: str, default: bool) -> bool:
        raw = self.text(name)
        if not raw:
            return default
        if raw.lower() in {"1", "true", "yes", "on"}:
            return True
        if raw.lower() in {"0", "false", "no", "off"}:
            return False
        raise ImproperlyConfigured(f"{name} must be true or false, not {raw!r}")

    def integer(self, name: str, default: int) -> int:
        raw = self.text(name)
        if not raw:
            return default
        try:
            return int(raw)
        except ValueError:
            raise ImproperlyConfigured(f"{name} must be a whole number, not {raw!r}") from None

    def json_list(self, name: str) -> list:
        return self._json(name, list, "a JSON list")

    def json_object(self, name: str) -> dict:
        return self._json(name, dict, "a JSON object")

    def _json(self, name: str, kind: type, what: str):
        raw = self.text(name)
        if not raw:
            return kind()
        try:
            value = json.loads(raw)
        except ValueError as error:
            raise ImproperlyConfigured(f"{name} must be {what}: {error}") from None
        if not isinstance(value, kind):
            raise ImproperlyConfigured(f"{name} must be {what}, not {type(value).__name__}")
        return value

    def listing(self, name: str, default: str) -> list[str]:
        return [item.strip() for item in self.text(name, default).split(",") if item.strip()]

    def networks(self, name: str) -> list[str]:
        """A comma-separated list of addresses and CIDRs (``10.0.0.0/8,127.0.0.1``)."""
        entries = self.listing(name, "")
        for entry in entries:
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError:
                raise ImproperlyConfigured(
                    f"{name} must list addresses or CIDRs (like 10.0.0.0/8), not {entry!r}"
                ) from None
        return entries

    def choice(self, name: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.text(name, default)
        if value not in choices:
            raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}, not {value!r}")
        return value

    def database(self, default: dict) -> dict:
        url = self.text("DATABASE_URL")
        if not url:
            return default
        scheme = urlparse(url).scheme
        if scheme not in {"postgres", "postgresql", "sqlite"}:
            raise ImproperlyConfigured(
                f"DATABASE_URL must be a postgres:// (or sqlite://) URL, not one for {scheme or 'nothing'!r}"
            )
        import dj_database_url

        pool_size = self.integer("KINDGI_DB_POOL_SIZE", 20)
        if scheme == "sqlite" or pool_size == 0:
            return dj_database_url.parse(
                url, conn_max_age=self.integer("KINDGI_DB_CONN_MAX_AGE", 60), conn_health_checks=True
            )
        # Django's connections are per thread, and besides the web process's request threads
        # (core.asgi) there are tool threads and request bursts: each would otherwise open a
        # connection to PostgreSQL of its own.
        database = dj_database_url.parse(url, conn_max_age=0, conn_health_checks=True)
        database.setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": pool_size, "timeout": 10}
        return database

    def channel_layers(self) -> dict:
        url = self.text("REDIS_URL")
        if not url:
            return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
        if urlparse(url).scheme not in {"redis", "rediss"}:
            raise ImproperlyConfigured(f"REDIS_URL must be a redis:// URL, not {url!r}")
        # Redis publish/subscribe: a group message reaches each web process once, however many
        # of its sockets listen (the list-based layer pushes one copy per socket). Delivery is
        # at most once, which live events can afford: a socket that (re)joins reads what it
        # missed from the database (a run's socket replays the journal; the queue reloads).
        return {
            "default": {
                "BACKEND": "channels_redis.pubsub.RedisPubSubChannelLayer",
                "CONFIG": {"hosts": [url]},
            }
        }

    def caches(self) -> dict:
        """Redis where ``REDIS_URL`` is set (shared by every process), else this process's memory."""
        url = self.text("REDIS_URL")
        if not url:
            return {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
        return {
            "default": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": url,
                "KEY_PREFIX": "kindgi",
            }
        }

    def task_queue(self) -> str:
        """Where runs execute (``KINDGI_TASKS``): ``immediate`` in the call that starts or resumes
        them; ``db``, ``rq`` or ``celery`` queued for workers."""
        queue = self.choice("KINDGI_TASKS", "immediate", TASK_QUEUES)
        if queue in QUEUES_ON_REDIS:
            if not self.text("REDIS_URL"):
                raise ImproperlyConfigured(
                    f"KINDGI_TASKS={queue} queues runs in Redis: set REDIS_URL (redis://host:6379/0) too"
                )
            library = QUEUES_ON_REDIS[queue]
            if importlib.util.find_spec(library) is None:
                raise ImproperlyConfigured(
                    f"KINDGI_TASKS={queue} needs {library.replace('_', '-')}: pip install 'kindgi[{queue}]'"
                )
        return queue

    def tasks(self) -> dict:
        queue = self.task_queue()
        if queue == "db":
            return {"default": {"BACKEND": "django_tasks_db.DatabaseBackend", "QUEUES": ["default"]}}
        if queue == "rq":
            # RQ has no priorities: resumed runs have a queue of their own, which workers look at
            # first (runs.dispatch).
            return {"default": {"BACKEND": "django_tasks_rq.RQBackend", "QUEUES": ["default", "resumed"]}}
        if queue == "celery":
            return {
                "default": {
                    "BACKEND": "django_tasks_celery.CeleryBackend",
                    "QUEUES": ["default"],
                    "OPTIONS": {"CELERY_APP": "kindgi_site.celery.app"},
                }
            }
        return {"default": {"BACKEND": "django.tasks.backends.immediate.ImmediateBackend"}}

    def queue_settings(self) -> dict:
        """The settings the chosen queue's library reads: RQ's queues, Celery's broker."""
        queue, url = self.task_queue(), self.text("REDIS_URL")
        if queue == "rq":
            # A queue's jobs outlive no result: what a run did is in its journal.
            # No job time limit (-1): a run's claim tells a dead executor from a slow one.
            queue_settings = {"URL": url, "DEFAULT_RESULT_TTL": 60, "DEFAULT_TIMEOUT": -1}
            return {"RQ_QUEUES": {"default": queue_settings, "resumed": queue_settings}}
        if queue == "celery":
            return {
                "CELERY_BROKER_URL": url,
                "CELERY_TASK_DEFAULT_QUEUE": "default",
                # A worker takes one task at a time and reserves none ahead: a run holds its worker
                # until it waits or ends, and a task reserved ahead would wait behind it while
                # another worker is idle.
                "CELERY_WORKER_PREFETCH_MULTIPLIER": 1,
                "CELERY_WORKER_DISABLE_PREFETCH": True,
                "CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP": True,
            }
        return {}

    def secret_key(self, *, debug: bool) -> str:
        key = self.text("SECRET_KEY")
        if key:
            if not debug and len(key) < 50:
                raise ImproperlyConfigured("SECRET_KEY must be at least 50 random characters in production")
            return key
        if not debug:
            raise ImproperlyConfigured("SECRET_KEY must be set when KINDGI_DEBUG is off")
        return "django-insecure-kindgi-development-only"
