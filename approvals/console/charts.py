"""Charts the console draws on the server, as SVG: a distribution as columns."""

from dataclasses import dataclass

CHART_WIDTH = 700
CHART_HEIGHT = 200
LABEL_ROOM = 24  # under the columns, for each bucket's words
COUNT_ROOM = 16  # over the tallest column, for its count


@dataclass
class Column:
    label: str
    count: int
    x: float
    y: float
    width: float
    height: float

    @property
    def middle(self) -> float:
        return round(self.x + self.width / 2, 1)


def columns(buckets: list[tuple[str, int]]) -> list[Column]:
    """One column per bucket, its height in proportion to the busiest; every bucket gets a slot,
    so an empty one shows as a gap rather than disappearing."""
    if not buckets:
        return []
    slot = CHART_WIDTH / len(buckets)
    busiest = max(count for _, count in buckets) or 1
    room = CHART_HEIGHT - LABEL_ROOM - COUNT_ROOM
    drawn = []
    for index, (label, count) in enumerate(buckets):
        height = round(count / busiest * room, 1)
        drawn.append(
            Column(
                label=label,
                count=count,
                x=round(index * slot + slot * 0.15, 1),
                y=round(COUNT_ROOM + room - height, 1),
                width=round(slot * 0.7, 1),
                height=height,
            )
        )
    return drawn
