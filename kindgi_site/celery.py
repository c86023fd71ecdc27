"""The Celery app of ``KINDGI_TASKS=celery``: Django's Tasks framework hands Celery each run to
execute (``django-tasks-celery``), and ``kindgi worker --backend celery`` is its worker.

Its settings are Django's, under ``CELERY_`` (``kindgi_site.config``: the broker is
``REDIS_URL``). Runs keep their own state in the database, so no result backend is set up.
"""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kindgi_site.settings")

app = Celery("kindgi")
app.config_from_object("django.conf:settings", namespace="CELERY")
