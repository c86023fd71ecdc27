"""``insert_rows`` writes a new row as ``save(force_insert=True)`` would, in a statement of its
own: every field, those with a database default too, and the instance saved from then on.
``update_row`` writes named fields as ``save(update_fields=…)`` would."""

import uuid
from datetime import UTC, datetime

import pytest
from django.db import DatabaseError
from django.db.models.expressions import DatabaseDefault

from core.rows import insert_rows, insert_values, update_row
from runs.models import JournalEntry, Run, Trigger
from tests.factories import default_tenant, member

pytestmark = pytest.mark.django_db(transaction=True)

WRITTEN_WHEN = {"id", "created_at", "updated_at"}
CONVERSATION = uuid.uuid4()


def service_account():
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(username="svc").first() or member("svc")


def a_run(**fields) -> Run:
    tenant = default_tenant()
    return Run(
        tenant=tenant,
        flow_key="agent.turn",
        flow_version="1.1.0",
        agent_key="acme-ops.status-agent",
        agent_version="0.1.0",
        input={"userMessage": "Up.", "list": [1, 2.5, None, True], "nested": {"ü": "ß"}},
        messages=[{"role": "user", "content": "Up."}],
        trigger=Trigger.SERVICE,  # not the column's database default
        service=service_account(),
        connection_owners={"tracker": {"username": "ada", "label": "Ada's"}},
        conversation_id=CONVERSATION,
        **fields,
    )


def stored(run: Run) -> dict:
    return {
        field.attname: value
        for field in Run._meta.concrete_fields
        if field.attname not in WRITTEN_WHEN
        for value in [Run.objects.values_list(field.attname, flat=True).get(pk=run.pk)]
    }


def test_a_run_is_stored_as_save_stores_it():
    saved, inserted = a_run(), a_run()
    saved.save(force_insert=True)
    insert_rows([inserted])
    assert stored(inserted) == stored(saved)
    assert stored(inserted)["trigger"] == "service"
    assert inserted.created_at is not None
    assert inserted.updated_at is not None


def test_an_inserted_row_is_saved_from_then_on():
    run = a_run()
    insert_rows([run])
    run.status = "running"
    run.save(update_fields=["status"])  # an UPDATE: a second INSERT would break the primary key
    assert Run.objects.get(pk=run.pk).status == "running"
    assert Run.objects.count() == 1


def test_several_rows_in_one_statement():
    runs = [a_run(), a_run(), a_run()]
    insert_rows(runs)
    assert set(Run.objects.values_list("pk", flat=True)) == {run.pk for run in runs}


def test_a_value_only_the_database_knows_is_refused():
    run = a_run()
    run.trigger = DatabaseDefault(Run._meta.get_field("trigger").db_default)
    with pytest.raises(TypeError, match=r"runs\.Run\.trigger"):
        insert_rows([run])
    assert not Run.objects.exists()


def test_a_key_the_database_makes_is_read_back_in_order():
    run = a_run()
    insert_rows([run])
    entries = [JournalEntry(run=run, sequence=sequence, kind="run.started") for sequence in (1, 2, 3)]
    insert_rows(entries)
    assert [entry.pk for entry in entries] == list(
        JournalEntry.objects.filter(run=run).order_by("sequence").values_list("pk", flat=True)
    )
    unread = [JournalEntry(run=run, sequence=4, kind="run.started")]
    insert_rows(unread, read_keys=False)
    assert unread[0].pk is None
    assert JournalEntry.objects.filter(run=run).count() == 4


def test_an_update_writes_what_save_with_update_fields_writes():
    updated, saved = a_run(), a_run()
    insert_rows([updated, saved])
    stamped = Run.objects.get(pk=updated.pk).updated_at
    for run in (updated, saved):
        run.status, run.waitpoint, run.output = "suspended", {"kind": "approval"}, {"left": "alone"}
    saved.save(update_fields=["status", "waitpoint", "updated_at"])
    update_row(updated, ["status", "waitpoint", "updated_at"])
    assert stored(updated) == stored(saved)
    assert stored(updated)["output"] is None  # a field not named is not written
    assert Run.objects.get(pk=updated.pk).updated_at > stamped  # auto_now, as save sets it


def test_an_update_of_a_row_that_is_not_there_says_so():
    run = a_run()
    with pytest.raises(DatabaseError, match="is not there to update"):
        update_row(run, ["status"])
    assert not Run.objects.exists()


def test_values_are_stored_as_save_stores_the_same_fields():
    run = a_run()
    insert_rows([run])
    when = datetime(2026, 12, 3, 11, 30, 15, 123456, tzinfo=UTC)
    payload = {"text": "ü", "list": [1, 2.5, None, True], "nested": {"a": {"b": []}}}
    insert_values(
        JournalEntry,
        ("run", "sequence", "kind", "node_id", "created_at", "duration_ms", "payload"),
        [
            (run.pk, 1, "tool.completed", "step", when, 12, payload),
            (run.pk, 2, "run.completed", "", when, None, {}),
        ],
    )
    saved = JournalEntry(
        run=run, sequence=3, kind="tool.completed", node_id="step", duration_ms=12, payload=payload
    )
    saved.save()
    JournalEntry.objects.filter(pk=saved.pk).update(created_at=when)
    rows = list(
        JournalEntry.objects.filter(run=run)
        .order_by("sequence")
        .values_list("kind", "node_id", "created_at", "duration_ms", "payload")
    )
    assert rows == [
        ("tool.completed", "step", when, 12, payload),
        ("run.completed", "", when, None, {}),
        ("tool.completed", "step", when, 12, payload),
    ]
