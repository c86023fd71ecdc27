"""The worker's loop: django-tasks-db's, except that an idle worker waits to be told of a queued
task (``runs.wakeup``) rather than sleeping out its interval, and that on PostgreSQL it takes a
task in one statement.

django-tasks-db's ``Worker.run`` sleeps inline, with no hook, so this is its loop again with
those changes; running a task is the library's own.
"""

import json
import logging
import random
import time
from functools import cached_property

from django.db import OperationalError, close_old_connections, connections, router
from django.tasks import TaskResultStatus
from django.utils import timezone
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult, get_date_max
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
        alias = router.db_for_write(DBTaskResult)
        if connections[alias].vendor == "postgresql":
            return self._take_in_one_statement(alias), True
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

    def _take_in_one_statement(self, alias: str) -> DBTaskResult | None:
        """``_take`` as one UPDATE … RETURNING: the task the library would take (``ready()``,
        in the model's order, skipping rows other workers hold), claimed as its ``claim()``
        claims it. The library's way is a transaction of a locking read and a save: four round
        trips to the server, where each worker takes every task it runs; and a queryset
        compiled again each time."""
        now = timezone.now()
        params = [TaskResultStatus.RUNNING, now, json.dumps([self.worker_id])]
        params += [TaskResultStatus.READY, self.backend_name, get_date_max(), now]
        if not self.process_all_queues:
            params += self.queue_names
        params += self.excluded_queue_names
        taken = list(DBTaskResult.objects.using(alias).raw(self._take_sql, params))
        return taken[0] if taken else None

    @cached_property
    def _take_sql(self) -> str:
        """Built once: what it chooses from (this worker's backend and queues) does not change."""
        meta, quoted = DBTaskResult._meta, connections[router.db_for_write(DBTaskResult)].ops.quote_name

        def column(name: str) -> str:
            return quoted(meta.get_field(name).column)

        chosen = [
            f"{column('status')} = %s",
            f"{column('backend_name')} = %s",
            f"({column('run_after')} = %s OR {column('run_after')} <= %s)",
        ]
        if not self.process_all_queues:
            chosen.append(f"{column('queue_name')} IN ({', '.join(['%s'] * len(self.queue_names))})")
        if self.excluded_queue_names:
            chosen.append(
                f"{column('queue_name')} NOT IN ({', '.join(['%s'] * len(self.excluded_queue_names))})"
            )
        order = ", ".join(
            f"{column(term.expression.name)} {'DESC' if term.descending else 'ASC'}" for term in meta.ordering
        )
        table, key, worker_ids = quoted(meta.db_table), column("id"), column("worker_ids")
        return (
            f"UPDATE {table} SET {column('status')} = %s, {column('started_at')} = %s, "
            f"{worker_ids} = {worker_ids} || CAST(%s AS jsonb) "
            f"WHERE {key} = (SELECT {key} FROM {table} WHERE {' AND '.join(chosen)} "
            f"ORDER BY {order} LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING *"
        )

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
