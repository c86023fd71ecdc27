"""Count the SQL statements and commits a piece of work makes on the default database."""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.db import connection

WRITES = ("INSERT", "UPDATE", "DELETE", "REPLACE")


def _writes(sql: str) -> bool:
    """Whether the statement writes: a write, or a WITH whose parts write (PostgreSQL)."""
    text = sql.lstrip().upper()
    if text.startswith(WRITES):
        return True
    return text.startswith("WITH") and any(f"{verb} " in text for verb in WRITES)


@dataclass
class Counts:
    statements: int = 0
    commits: int = 0


@contextmanager
def counting() -> Iterator[Counts]:
    """Statements through Django's cursor; commits: those of transactions, and each write made
    in autocommit mode (it commits itself)."""
    counts = Counts()

    def wrapper(execute, sql, params, many, context):
        counts.statements += 1
        if not connection.in_atomic_block and _writes(sql):
            counts.commits += 1
        return execute(sql, params, many, context)

    original_commit = connection._commit

    def commit():
        counts.commits += 1
        return original_commit()

    connection._commit = commit
    try:
        with connection.execute_wrapper(wrapper):
            yield counts
    finally:
        connection._commit = original_commit
