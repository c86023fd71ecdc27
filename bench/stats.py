"""Figures as the JSON holds them: the median of the repetitions, with their min and max."""

import statistics
from collections.abc import Sequence


def summary(values: Sequence[float], digits: int = 3) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile (0.5 is the median, 0.95 the 95th)."""
    ordered = sorted(values)
    rank = max(1, round(fraction * len(ordered) + 0.5 - 1e-9))
    return ordered[min(rank, len(ordered)) - 1]
