"""A run's timeline: model calls, tool calls and waits as bars on one time axis.

Pure: journal entries in, bars out. Each tool call gets a lane of its own while it overlaps
another, so concurrent calls sit side by side; model calls and waits share the first lane.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

LANE_HEIGHT = 26
WIDTH = 1000


@dataclass
class Bar:
    kind: str  # model | tool | wait
    label: str
    start: datetime
    end: datetime
    detail: str = ""
    lane: int = 0
    x: float = 0.0
    width: float = 0.0

    @property
    def y(self) -> int:
        return self.lane * LANE_HEIGHT + 4

    @property
    def label_at_end(self) -> bool:
        """Near the right edge, the label goes to the bar's left so that it is not cut off."""
        return self.x + self.width > WIDTH * 0.8 and self.width < WIDTH * 0.5

    @property
    def label_x(self) -> float:
        return self.x - 4 if self.label_at_end else self.x + 4

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()


def build(entries: Iterable) -> tuple[list[Bar], int]:
    """Bars with their lanes and x/width in SVG units (0–1000), and the SVG's height."""
    bars: list[Bar] = []
    open_calls: dict[str, Bar] = {}
    waiting: Bar | None = None
    for entry in entries:
        payload, at = entry.payload or {}, entry.created_at
        if entry.kind == "model.called":
            started = at - timedelta(milliseconds=entry.duration_ms or 0)
            label = "model" + (f" (attempt {payload['attempt']})" if payload.get("attempt", 1) > 1 else "")
            bars.append(
                Bar(kind="model", label=label, start=started, end=at, detail=payload.get("error", ""))
            )
        elif entry.kind == "tool.called":
            bar = Bar(kind="tool", label=payload.get("toolId", ""), start=at, end=at)
            open_calls[payload.get("callId", entry.node_id)] = bar
            bars.append(bar)
        elif entry.kind in ("tool.completed", "tool.failed"):
            bar = open_calls.pop(payload.get("callId", entry.node_id), None)
            if bar is not None:
                bar.end = at
                bar.start = min(bar.start, at - timedelta(milliseconds=entry.duration_ms or 0))
                bar.detail = "failed" if entry.kind == "tool.failed" else ""
        elif entry.kind == "wait.suspended":
            waiting = Bar(kind="wait", label="waiting", start=at, end=at)
            bars.append(waiting)
        elif entry.kind == "wait.resumed" and waiting is not None:
            resolution = payload.get("resolution", {})
            waiting.end = at
            if resolution.get("decision"):
                word = {"approve": "approved", "reject": "rejected"}.get(resolution["decision"], "decided")
                waiting.label = f"{word} by {resolution.get('reviewer') or 'nobody (expired)'}"
            waiting = None
    if not bars:
        return [], LANE_HEIGHT
    _assign_lanes(bars)
    first = min(bar.start for bar in bars)
    last = max(max(bar.end for bar in bars), first + timedelta(milliseconds=1))
    total = (last - first).total_seconds()
    for bar in bars:
        bar.x = round((bar.start - first).total_seconds() / total * WIDTH, 1)
        bar.width = max(round(bar.seconds / total * WIDTH, 1), 3.0)
    return bars, (max(bar.lane for bar in bars) + 1) * LANE_HEIGHT + 8


def _assign_lanes(bars: list[Bar]) -> None:
    lane_ends: list[datetime] = []  # tool lanes, from lane 1
    for bar in sorted((b for b in bars if b.kind == "tool"), key=lambda b: b.start):
        for index, end in enumerate(lane_ends):
            if end <= bar.start:
                bar.lane, lane_ends[index] = index + 1, bar.end
                break
        else:
            lane_ends.append(bar.end)
            bar.lane = len(lane_ends)
