"""The journal's hand-built statements: the claim and the claimed step, a run's two most
frequent writes, each one statement where the database allows (a WITH whose parts write, on
PostgreSQL), built once per shape and kept here so that ``runs.journal`` reads as what it
records, not how.
"""

from datetime import datetime
from functools import cache
from typing import Any, NamedTuple

from django.db import connection, models

from runs.models import JournalEntry, Run


class WrittenEntry(NamedTuple):
    """A journal entry as ``append_entries`` wrote it: what the live events and
    ``RunState.fold`` read of it."""

    sequence: int
    kind: str
    node_id: str
    created_at: datetime
    duration_ms: int | None
    payload: dict[str, Any]


ENTRY_COLUMNS = ("run", *WrittenEntry._fields)

# run.started's payload: its label for each of the run's fields (``claim_sql`` builds it too).
STARTED_PAYLOAD = (("input", "input"), ("dryRun", "dry_run"), ("readOnly", "read_only"))


def writes_in_one_statement(db) -> bool:
    """Whether the database runs a WITH whose parts write (PostgreSQL; SQLite does not), so
    that a claim or a step with its entries is one statement, which commits by itself."""
    return db.vendor == "postgresql"


@cache
def claim_sql() -> str:
    """``runs.journal``'s claim on PostgreSQL: the run's UPDATE, and its first entry when it
    has none, in one statement."""
    quoted = connection.ops.quote_name

    def column(model, name: str) -> str:
        return quoted(model._meta.get_field(name).column)

    run, entry = quoted(Run._meta.db_table), quoted(JournalEntry._meta.db_table)
    key, status, token, expires, sequence, started_at, updated_at = (
        column(Run, name)
        for name in (
            "id",
            "status",
            "claim_token",
            "claim_expires_at",
            "last_sequence",
            "started_at",
            "updated_at",
        )
    )
    started = ", ".join(f"'{label}', {column(Run, name)}" for label, name in STARTED_PAYLOAD)
    entry_columns = ", ".join(column(JournalEntry, name) for name in ENTRY_COLUMNS)
    return (
        f"WITH claimed AS (UPDATE {run} SET {status} = %s, {token} = %s, {expires} = %s, "
        f"{started_at} = COALESCE({started_at}, %s), {updated_at} = %s, {sequence} = GREATEST({sequence}, 1) "
        f"WHERE {key} = %s AND ({status} = %s OR ({status} = %s AND ({expires} IS NULL OR {expires} <= %s))) "
        f"RETURNING {run}.*, ({sequence} = 1 AND NOT EXISTS (SELECT 1 FROM {entry} "
        f"WHERE {column(JournalEntry, 'run')} = {run}.{key})) AS started_now), "
        f"started AS (INSERT INTO {entry} ({entry_columns}) "
        f"SELECT {key}, 1, %s, '', %s, NULL, jsonb_build_object({started}) FROM claimed WHERE started_now) "
        f"SELECT * FROM claimed"
    )


def entry_params(entry: WrittenEntry, db) -> list[Any]:
    """An entry's values for ``advance_sql``'s VALUES: its place among the step's entries
    (1, 2, …) where its sequence goes, then the others as ``save()`` prepares them."""
    fields = entry_fields()
    return [entry.sequence] + [
        field.get_db_prep_save(value, db) for field, value in zip(fields[2:], entry[1:], strict=True)
    ]


@cache
def entry_fields() -> tuple:
    return tuple(JournalEntry._meta.get_field(name) for name in ENTRY_COLUMNS)


@cache
def advance_sql(vendor: str, names: tuple[str, ...], with_messages: bool, entries: int) -> str:
    """``_advance_claimed``'s statement, for the fields it sets and the number of ``entries``
    it appends in the same statement (built once per shape: it is the engine's most frequent)."""
    quoted = connection.ops.quote_name
    column = {name: quoted(Run._meta.get_field(name).column) for name in ("id", "status", "claim_token")}
    sequence, parent = (quoted(Run._meta.get_field(name).column) for name in ("last_sequence", "parent"))
    assignments = [f"{sequence} = {sequence} + %s"]
    assignments += [f"{quoted(Run._meta.get_field(name).column)} = %s" for name in names]
    if with_messages:
        cast = "CAST(%s AS jsonb)" if vendor == "postgresql" else "%s"
        assignments.append(f"{quoted(Run._meta.get_field('messages').column)} = {cast}")
    update = (
        f"UPDATE {quoted(Run._meta.db_table)} SET {', '.join(assignments)} "
        f"WHERE {column['id']} = %s AND {column['status']} = %s AND {column['claim_token']} = %s "
        f"RETURNING {sequence}, {parent}"
    )
    if not entries:
        return update
    # The entries' sequences follow from the run's new one: each takes its place (1, 2, …)
    # after the sequence the run had. Typed in the VALUES, which PostgreSQL would read as text;
    # text, not varchar(n), which would cut a value too long where the INSERT refuses it.
    fields = entry_fields()
    names = ["place", *(field.column for field in fields[2:])]
    types = ["integer"] + [
        "text" if isinstance(field, models.CharField) else field.cast_db_type(connection)
        for field in fields[2:]
    ]
    row = "(" + ", ".join(f"CAST(%s AS {kind})" for kind in types) + ")"
    selected = ", ".join(f"entry.{quoted(name)}" for name in names[1:])
    labels = ", ".join(quoted(name) for name in names)
    return (
        f"WITH advanced AS ({update}), appended AS ("
        f"INSERT INTO {quoted(JournalEntry._meta.db_table)} "
        f"({', '.join(quoted(field.column) for field in fields)}) "
        f"SELECT %s, advanced.{sequence} - %s + entry.place, {selected} "
        f"FROM advanced, (VALUES {', '.join([row] * entries)}) AS entry({labels})"
        f") SELECT {sequence}, {parent} FROM advanced"
    )
