"""The bounds of the numbers a person types (seconds, counts, sizes): one place that says how large
each may be, so that the API's fields, the admin's forms and the checks behind them refuse the same
values, naming the bound, and no number that fits a field can break a run later (an approval whose
time ends past the year 9999, a database integer overflowed)."""

# A year: the longest an approval may wait, and an escalation step's delay.
SECONDS_MAX = 365 * 24 * 60 * 60
# A journal's sequence, a position: what a database's integer holds.
SEQUENCE_MAX = 2**31 - 1


def whole_number_error(value, *, low: int, high: int) -> str | None:
    """Why ``value`` is not a whole number from ``low`` to ``high`` (true and false are not
    numbers, nor is 60.0), or None."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        return f"must be a whole number from {low} to {high}"
    return None
