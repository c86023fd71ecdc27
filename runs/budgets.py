"""The rules' budgets as the database keeps them: the ledger an execution hands the kernel
(``runs.engine.budgets.BudgetLedger``).

A charge is checked and written in one transaction under a lock on its budget's scope (the
tenant, the rule and the scope's key): PostgreSQL takes an advisory lock for it, and SQLite's
transactions already take the database's write lock as they begin. So of concurrent calls that
would together go over a budget, only those that fit are charged.

A call a person approved (or a grant let run) is charged whatever it takes, so it needs no check:
its charge is written with the run's next step, the call's intent, in that step's transaction.
"""

import hashlib
from datetime import UTC, datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone

from runs.engine.budgets import BudgetUse, Charge, fits
from runs.engine.entries import EntryKind
from runs.grants import release_uncalled_uses
from runs.models import BudgetCharge, JournalEntry, Run

# A budget without a window counts every charge of its scope.
EVER = datetime(2000, 1, 1, tzinfo=UTC)

# The read a gate makes about a budgeted call, on the hot path: one statement, no ORM compile.
_USED_SQL = (
    "SELECT COUNT(*), COALESCE(SUM(amount), 0) FROM {table} WHERE tenant_id = %s AND rule_id = %s "
    "AND scope_key = %s AND created_at > %s AND NOT (run_id = %s AND call_id = %s)"
)


def _prepared(name: str, value):
    return BudgetCharge._meta.get_field(name).get_db_prep_value(value, connection)


class RunBudgets:
    """The ledger for one run's calls."""

    def __init__(self, run: Run):
        self.tenant_id = run.tenant_id
        self.run_id = run.pk
        # Charges to write with the next step, by (rule, call).
        self.pending: dict[tuple[int, str], Charge] = {}

    def use(self, charge: Charge) -> BudgetUse:
        calls, total = self._used(charge)
        return BudgetUse(
            calls=calls, total=total, fits=fits(charge.budget, calls=calls, total=total, amount=charge.amount)
        )

    def charge(self, charge: Charge, *, even_over: bool = False) -> BudgetUse:
        if even_over:
            self.pending[charge.rule_id, charge.call_id] = charge
            return BudgetUse(calls=0, total=0, fits=True)
        with transaction.atomic():
            self._lock(charge)
            calls, total = self._used(charge)
            if self._mine(charge).exists():
                return BudgetUse(calls=calls, total=total, fits=True)  # charged already: a replay
            fitting = fits(charge.budget, calls=calls, total=total, amount=charge.amount)
            if fitting or even_over:
                BudgetCharge.objects.create(
                    tenant_id=self.tenant_id,
                    rule_id=charge.rule_id,
                    scope_key=charge.key,
                    run_id=self.run_id,
                    call_id=charge.call_id,
                    amount=charge.amount,
                )
            return BudgetUse(calls=calls, total=total, fits=fitting)

    def release(self, charge: Charge) -> None:
        if self.pending.pop((charge.rule_id, charge.call_id), None) is None:
            self._mine(charge).delete()

    def write_pending(self) -> None:
        """Write the charges that wait for the run's next step, inside that step's transaction
        (a replay's charge, written already, is left as it is)."""
        charges, self.pending = list(self.pending.values()), {}
        BudgetCharge.objects.bulk_create(
            [
                BudgetCharge(
                    tenant_id=self.tenant_id,
                    rule_id=charge.rule_id,
                    scope_key=charge.key,
                    run_id=self.run_id,
                    call_id=charge.call_id,
                    amount=charge.amount,
                )
                for charge in charges
            ],
            ignore_conflicts=True,
        )

    def _mine(self, charge: Charge):
        return BudgetCharge.objects.filter(rule_id=charge.rule_id, run_id=self.run_id, call_id=charge.call_id)

    def _used(self, charge: Charge) -> tuple[int, float]:
        """The calls and the sum charged to the budget's scope in its window, this call's left out."""
        window = charge.budget.window_seconds
        since = timezone.now() - timedelta(seconds=window) if window is not None else EVER
        values = [
            _prepared("tenant", self.tenant_id),
            _prepared("rule_id", charge.rule_id),
            _prepared("scope_key", charge.key),
            _prepared("created_at", since),
            _prepared("run", self.run_id),
            _prepared("call_id", charge.call_id),
        ]
        with connection.cursor() as cursor:
            cursor.execute(_USED_SQL.format(table=BudgetCharge._meta.db_table), values)
            calls, total = cursor.fetchone()
        return calls, total

    def _lock(self, charge: Charge) -> None:
        if connection.vendor != "postgresql":
            return  # SQLite: the transaction holds the database's write lock (BEGIN IMMEDIATE)
        scope = f"budget:{self.tenant_id}:{charge.rule_id}:{charge.key}".encode()
        key = int.from_bytes(hashlib.blake2b(scope, digest_size=8).digest(), "big", signed=True)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [key])


def release_uncalled(run_id) -> None:
    """Give back what a finished run's calls that never ran still hold: their budgets' charges
    and their grants' uses. A call can pass its gate and never run: its run was cancelled while
    it waited for a connection, or a crash came before its intent and the model, asked again,
    named its calls anew. A call whose intent was journaled keeps its charge: it ran, or may
    have. Precondition: the run has finished (no execution charges it any more)."""
    called = {
        str(call_id)
        for call_id in JournalEntry.objects.filter(run_id=run_id, kind=EntryKind.TOOL_CALLED).values_list(
            "payload__callId", flat=True
        )
    }
    with transaction.atomic():
        BudgetCharge.objects.filter(run_id=run_id).exclude(call_id__in=called).delete()
        release_uncalled_uses(run_id, called)
