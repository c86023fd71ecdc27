"""The worker's loop: django-tasks-db's, except that an idle worker waits to be told of a queued
task (``runs.wakeup``) rather than sleeping out its interval.

django-tasks-db's ``Worker.run`` sleeps inline, with no hook, so this is its loop again with
that one change; taking a task, claiming it and running it are the library's own.
"""

import logging
import random
import time

from django.db import OperationalError, close_old_connections
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult
from django_tasks_db.utils import exclusive_transaction, is_locked_database_exception

from runs.wakeup import Listener

logger = logging.getLogger("django_tasks_db")


class WakeableWorker(Worker):
    def _ready_tasks(self):
        tasks = DBTaskResult.objects.ready().filter(backend_name=self.backend_name)
        if not self.process_all_queues:
            tasks = tasks.filter(queue_name__in=self.queue_names)
        if self.excluded_queue_names:
            tasks = tasks.exclude(queue_name__in=self.excluded_queue_names)
        return tasks

    def _take(self) -> tuple[DBTaskResult | None, bool]:
        """The next ready task, claimed for this worker (or None), and whether the queue could
        be read at all (SQLite may be locked by a writer for a moment)."""
        tasks = self._ready_tasks()
        with exclusive_transaction(tasks.db):
            try:
                task_result = tasks.get_locked()
            except OperationalError as error:
                if is_locked_database_exception(error):
                    return None, False
                raise
            if task_result is not None:
                task_result.claim(self.worker_id)
            return task_result, True

    def run(self) -> None:
        logger.info("Starting worker worker_id=%s queues=%s", self.worker_id, ",".join(self.queue_names))
        if self.startup_delay and self.interval:
            time.sleep(random.random())  # workers started together look apart
        listener = Listener(self.backend_name)
        listener.start()
        try:
            while self.running:
                close_old_connections()
                task_result, read = self._take()
                if task_result is not None:
                    self.run_task(task_result)
                if self.batch and read and task_result is None:
                    return
                if self.max_tasks is not None and self._run_tasks >= self.max_tasks:
                    return
                close_old_connections()
                if self.running and task_result is None:
                    listener.wait(self.interval)
        finally:
            listener.close()
