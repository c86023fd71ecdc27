"""Waking workers when a task is queued, rather than leaving it until their next look.

On PostgreSQL, the transaction that queues a task also sends a NOTIFY, which PostgreSQL
delivers when (and only if) that transaction commits; an idle worker LISTENs on a connection
of its own in place of sleeping, and looks at the queue as soon as it is told. A decision's
resumed run then starts within milliseconds, not within the worker's polling interval. The
interval stays as the fallback: on SQLite (no NOTIFY), and whenever the listening connection
is down, a worker looks at the queue every ``--interval`` seconds as before.
"""

import logging
import time

from django.db import connections, router
from django.dispatch import receiver
from django.tasks import task_backends
from django.tasks.signals import task_enqueued
from django_tasks_db import DatabaseBackend
from django_tasks_db.models import DBTaskResult

logger = logging.getLogger("kindgi.runs")

CHANNEL = "kindgi_tasks"


def _queue_alias() -> str:
    return router.db_for_write(DBTaskResult)


@receiver(task_enqueued)
def notify_workers(sender, task_result, **kwargs) -> None:
    """Have PostgreSQL tell the listening workers once the enqueuing transaction commits."""
    if not issubclass(sender, DatabaseBackend):
        return
    connection = connections[_queue_alias()]
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_notify(%s, %s)", [CHANNEL, task_result.backend])


class Listener:
    """A worker's own connection, LISTENing for queued tasks; ``wait`` stands in for its sleep."""

    def __init__(self, backend_name: str):
        self.alias = _queue_alias()
        self.backend_name = backend_name
        self._connection = None

    @property
    def available(self) -> bool:
        return connections[self.alias].vendor == "postgresql" and isinstance(
            task_backends[self.backend_name], DatabaseBackend
        )

    def _listening(self):
        if self._connection is None or self._connection.closed:
            wrapper = connections[self.alias]  # its settings; the connection is not the pool's
            self._connection = wrapper.Database.connect(**wrapper.get_connection_params(), autocommit=True)
            self._connection.execute(f"LISTEN {CHANNEL}")
        return self._connection

    def start(self) -> None:
        """Listen from now on, before the worker's first look at the queue, so that a task
        queued between that look and the first wait is heard of too."""
        if not self.available:
            return
        try:
            self._listening()
        except Exception as error:  # wait() tries again, and polls meanwhile
            logger.warning("worker: could not listen for queued tasks, polling instead: %s", error)
            self.close()

    def wait(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for word of a queued task; True if word came. Any failure of
        the listening connection makes this a plain wait, and the next call connects again."""
        if not self.available:
            time.sleep(seconds)
            return False
        try:
            for _ in self._listening().notifies(timeout=seconds, stop_after=1):
                return True
            return False
        except Exception as error:  # the queue is still polled: a lost wake-up costs an interval
            logger.warning("worker: listening for queued tasks failed, polling instead: %s", error)
            self.close()
            time.sleep(seconds)
            return False

    def close(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None
