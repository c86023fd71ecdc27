"""Reading the one row a unique key names."""

from django.db.models import Model, QuerySet


def one_or_none[M: Model](rows: QuerySet[M]) -> M | None:
    """The row ``rows`` (filtered on a unique key) holds, or None.

    ``.first()`` would order by the primary key to choose among rows there cannot be several
    of: compiling that ORDER BY took a third of such a lookup's time (0.4 of 1.1 ms for a run
    read by the API)."""
    try:
        return rows.get()
    except rows.model.DoesNotExist:
        return None
