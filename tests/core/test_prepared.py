"""A ``Prepared`` read gives what its queryset gives, with the values of each call, from SQL
Django compiled once for the connection."""

import gc
import threading
import weakref
from unittest import mock

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections, transaction
from django.db.models.sql.compiler import SQLCompiler
from django.db.transaction import TransactionManagementError
from django.forms.models import model_to_dict

from core.prepared import Param, Prepared
from runs.models import JournalEntry, Run
from tenants.models import Tenant
from tests.factories import default_tenant

pytestmark = pytest.mark.django_db(transaction=True)

RUN_KEY = Param("run", Run._meta.pk)
TENANT_KEY = Param("tenant", Run._meta.get_field("tenant"))
RUN_WITH_TENANT = Prepared(
    lambda: Run.objects.select_related("tenant").filter(pk=RUN_KEY, tenant=TENANT_KEY).order_by()
)
JOURNAL = Prepared(
    lambda: (
        JournalEntry.objects.filter(run=Param("run", JournalEntry._meta.get_field("run")))
        .order_by("sequence")
        .values_list("sequence", "kind", "created_at", "payload")
    )
)


def a_run(message: str) -> Run:
    return Run.objects.create(
        tenant=default_tenant(),
        flow_key="agent.turn",
        flow_version="1.1.0",
        agent_key="acme-ops.status-agent",
        agent_version="0.1.0",
        input={"userMessage": message},
        messages=[{"role": "user", "content": message}],
    )


def as_stored(instance) -> dict:
    return model_to_dict(instance) | {"pk": instance.pk, "created_at": getattr(instance, "created_at", None)}


def test_it_gives_what_the_queryset_gives_with_what_select_related_follows():
    first, second = a_run("Up."), a_run("Down.")
    for run in (first, second):
        expected = Run.objects.select_related("tenant").get(pk=run.pk)
        found = RUN_WITH_TENANT.one_or_none(run=run.pk, tenant=run.tenant_id)
        assert as_stored(found) == as_stored(expected)
        assert found.input == {"userMessage": run.input["userMessage"]}  # JSON, decoded
        assert found.created_at == expected.created_at  # a time, converted
        with connection.execute_wrapper(refuse_queries):
            assert as_stored(found.tenant) == as_stored(expected.tenant)  # no second read


def refuse_queries(execute, sql, params, many, context):
    raise AssertionError(f"a query was made: {sql}")


def test_a_key_that_names_nothing_finds_none():
    run = a_run("Up.")
    other = Tenant.objects.create(slug="other", name="Other")
    assert RUN_WITH_TENANT.one_or_none(run=run.pk, tenant=other.pk) is None


def test_values_list_gives_converted_tuples_in_order():
    run = a_run("Up.")
    JournalEntry.objects.bulk_create(
        [JournalEntry(run=run, sequence=n, kind="run.started", payload={"n": n}) for n in (2, 1, 3)]
    )
    expected = list(
        JournalEntry.objects.filter(run=run)
        .order_by("sequence")
        .values_list("sequence", "kind", "created_at", "payload")
    )
    assert JOURNAL.rows(run=run.pk) == expected
    assert [payload["n"] for *_, payload in JOURNAL.rows(run=run.pk)] == [1, 2, 3]


def test_django_compiles_it_once_per_connection():
    first, second = a_run("Up."), a_run("Down.")
    reads = Prepared(lambda: Run.objects.filter(pk=RUN_KEY).order_by())
    with mock.patch.object(SQLCompiler, "as_sql", autospec=True, side_effect=SQLCompiler.as_sql) as compiled:
        assert reads.one_or_none(run=first.pk).pk == first.pk
        assert reads.one_or_none(run=second.pk).pk == second.pk
        assert reads.one_or_none(run=first.pk).pk == first.pk
    assert compiled.call_count == 1


def test_each_thread_reads_on_its_own_connection():
    runs = [a_run(f"Run {n}.") for n in range(4)]
    reads = Prepared(lambda: Run.objects.filter(pk=RUN_KEY).order_by())
    found, errors = {}, []

    def read(run):
        try:
            found[run.pk] = reads.one_or_none(run=run.pk).input
        except Exception as error:  # reported below, in the test's thread
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=read, args=(run,)) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert found == {run.pk: run.input for run in runs}


def test_a_locking_read_needs_a_transaction():
    run = a_run("Up.")
    locked = Prepared(lambda: Run.objects.select_for_update().filter(pk=RUN_KEY).order_by())
    with transaction.atomic():
        assert locked.one_or_none(run=run.pk).pk == run.pk
    with pytest.raises(TransactionManagementError):
        locked.one_or_none(run=run.pk)


def test_annotations_are_refused():
    from django.db.models import Count

    counted = Prepared(lambda: Run.objects.annotate(entries=Count("journal")).filter(pk=RUN_KEY))
    with pytest.raises(TypeError, match="annotations"):
        counted.rows(run=a_run("Up.").pk)


def test_a_thread_that_ends_leaves_its_connection_to_be_collected():
    run = a_run("Up.")
    reads = Prepared(lambda: Run.objects.filter(pk=RUN_KEY).order_by())
    used = []

    def read():
        assert reads.one_or_none(run=run.pk).pk == run.pk
        used.append(weakref.ref(connections[DEFAULT_DB_ALIAS]))
        connection.close()

    thread = threading.Thread(target=read)
    thread.start()
    thread.join()
    gc.collect()
    assert used
    assert used[0]() is None
