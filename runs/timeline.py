"""A run's timeline: its model calls, tool calls, flow steps and waits on one time axis, with the
runs its steps started drawn beneath it.

Pure: journal entries in, a drawing out, in SVG units (``WIDTH`` wide). Every bar has a label,
inside it when it fits and beside it when not, and bars are packed into lanes by the room their
labels take: two calls at once sit in lanes of their own, and no label covers another. Labels
are measured as monospace text, which is how the console draws them.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

WIDTH = 1000
PLOT_LEFT, PLOT_RIGHT = 10.0, WIDTH - 10.0
AXIS_HEIGHT = 26
LANE_HEIGHT = 24
BAR_HEIGHT = 18
HEADER_HEIGHT = 22
FONT_SIZE = 11
CHAR_WIDTH = 6.8  # a monospace glyph is 0.6 em (6.6 units at FONT_SIZE); a little more, to be safe
LABEL_GAP = 4.0
LANE_GAP = 8.0  # units kept free between two neighbours in one lane
MIN_BAR_WIDTH = 2.0
MAX_LABELLED_LANES = 10  # past this, a bar whose label finds no room keeps only its tooltip
MAX_BARS = 400
MAX_TICKS = 8
NICE_STEPS = (
    [n * 10.0**e for e in range(-3, 1) for n in (1, 2, 5)]
    + [10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0]
    + [3600.0 * h for h in (1, 2, 3, 6, 12)]
    + [86400.0 * d for d in (1, 2, 7, 14, 30)]
)
DECIDED = {"approve": "approved", "reject": "rejected", "request_changes": "changes requested"}


@dataclass
class Bar:
    kind: str  # model | tool | refused | step | wait | escalation
    label: str
    start: datetime
    end: datetime
    detail: str = ""
    full_label: str = ""  # the label before it was shortened or left out for want of room
    ongoing: bool = False  # still going: it runs to "now"
    failed: bool = False
    lane: int = 0
    x: float = 0.0
    width: float = 0.0
    y: float = 0.0
    label_x: float = 0.0
    label_anchor: str = "start"
    label_inside: bool = False

    @property
    def seconds(self) -> float:
        return (self.end - self.start).total_seconds()

    @property
    def tooltip(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        so_far = " so far" if self.ongoing else ""
        return f"{self.full_label or self.label}{detail}: {format_duration(self.seconds)}{so_far}"

    @property
    def label_width(self) -> float:
        return len(self.label) * CHAR_WIDTH

    @property
    def label_left(self) -> float:
        return self.label_x - self.label_width if self.label_anchor == "end" else self.label_x

    @property
    def text_y(self) -> float:
        return round(self.y + BAR_HEIGHT / 2 + FONT_SIZE * 0.35, 1)

    def footprint(self) -> tuple[float, float]:
        """The stretch of its lane the bar and its label take."""
        if not self.label:
            return self.x, self.x + self.width
        return min(self.x, self.label_left), max(self.x + self.width, self.label_left + self.label_width)


@dataclass
class Group:
    """The run's own bars (no title) or those of a run one of its steps started."""

    title: str
    href: str = ""
    bars: list[Bar] = field(default_factory=list)
    top: float = 0.0
    lanes: int = 1

    @property
    def title_y(self) -> float:
        return self.top + HEADER_HEIGHT - 7

    @property
    def height(self) -> float:
        return (HEADER_HEIGHT if self.title else 0) + self.lanes * LANE_HEIGHT


@dataclass
class Tick:
    x: float
    label: str
    anchor: str = "middle"


@dataclass
class Timeline:
    groups: list[Group]
    ticks: list[Tick]
    height: float
    starts_at: datetime | None
    seconds: float
    ongoing: bool
    left_out: int  # bars past MAX_BARS, not drawn

    @property
    def bars(self) -> list[Bar]:
        return [bar for group in self.groups for bar in group.bars]

    @property
    def escalated(self) -> bool:
        return any(bar.kind == "escalation" for bar in self.bars)

    width = WIDTH
    plot_left = PLOT_LEFT
    plot_right = PLOT_RIGHT
    axis_y = AXIS_HEIGHT - 6


@dataclass
class ChildRun:
    """A run started by one of the run's steps, to draw beneath it."""

    title: str
    href: str
    entries: Iterable
    live: bool


def build(
    entries: Iterable, *, now: datetime, live: bool = False, children: Sequence[ChildRun] = ()
) -> Timeline:
    """The timeline of a run whose journal is ``entries``. ``live``: the run has not finished,
    so what is still open (a wait, a call under way) runs to ``now``."""
    groups = [Group(title="", bars=bars_of(entries, now=now, live=live))]
    groups += [
        Group(title=c.title, href=c.href, bars=bars_of(c.entries, now=now, live=c.live)) for c in children
    ]
    left_out = _keep_at_most(groups, MAX_BARS)
    everything = [bar for group in groups for bar in group.bars]
    if not everything:
        return Timeline(
            groups=[], ticks=[], height=AXIS_HEIGHT, starts_at=None, seconds=0.0, ongoing=False, left_out=0
        )
    first = min(bar.start for bar in everything)
    seconds = max((max(bar.end for bar in everything) - first).total_seconds(), 0.001)
    top = float(AXIS_HEIGHT)
    for group in groups:
        _place(group, first=first, seconds=seconds)
        group.top = top
        _set_heights(group)
        top += group.height
    return Timeline(
        groups=[group for group in groups if group.bars or group.title],
        ticks=ticks(seconds),
        height=top + 6,
        starts_at=first,
        seconds=seconds,
        ongoing=any(bar.ongoing for bar in everything),
        left_out=left_out,
    )


def bars_of(entries: Iterable, *, now: datetime, live: bool) -> list[Bar]:
    """One run's bars, read from its journal in order."""
    bars: list[Bar] = []
    calls: dict[str, Bar] = {}
    steps: dict[str, Bar] = {}
    waiting: Bar | None = None
    for entry in entries:
        payload, at, kind = entry.payload or {}, entry.created_at, entry.kind
        took = timedelta(milliseconds=entry.duration_ms or 0)
        if kind == "model.called":
            attempt = payload.get("attempt", 1)
            bars.append(
                Bar(
                    kind="model",
                    label="model" + (f" (attempt {attempt})" if attempt > 1 else ""),
                    start=at - took,
                    end=at,
                    detail=", ".join(filter(None, [payload.get("model", ""), payload.get("error", "")])),
                    failed=bool(payload.get("error")),
                )
            )
        elif kind == "tool.called":
            calls[payload.get("callId", entry.node_id)] = bar = Bar(
                kind="tool", label=payload.get("toolId", "tool"), start=at, end=at
            )
            bars.append(bar)
        elif kind in ("tool.completed", "tool.failed"):
            bar = calls.pop(payload.get("callId", entry.node_id), None)
            if bar is not None:
                bar.start, bar.end = min(bar.start, at - took), at
                bar.failed = kind == "tool.failed"
                bar.detail = "failed" if bar.failed else ""
        elif kind == "tool.refused":
            bars.append(
                Bar(
                    kind="refused",
                    label=f"refused: {payload.get('toolId', 'tool')}",
                    start=at,
                    end=at,
                    detail=str(payload.get("reason", ""))[:200],
                )
            )
        elif kind == "node.started" and entry.node_id:
            steps[entry.node_id] = bar = Bar(kind="step", label=f"step {entry.node_id}", start=at, end=at)
            bars.append(bar)
        elif kind == "node.completed" and entry.node_id in steps:
            steps.pop(entry.node_id).end = at
        elif kind == "wait.suspended":
            waiting = Bar(kind="wait", label=_waiting_label(payload.get("waitpoint") or {}), start=at, end=at)
            bars.append(waiting)
        elif kind == "approval.escalated":
            bars.append(
                Bar(kind="escalation", label=f"escalated: {_escalation_words(payload)}", start=at, end=at)
            )
        elif kind == "wait.resumed" and waiting is not None:
            waiting.end = at
            waiting.label, waiting.detail = _resolution_words(payload.get("resolution") or {}, waiting.label)
            waiting = None
    if live:
        for bar in [waiting, *calls.values(), *steps.values()]:
            if bar is not None and bar.end <= now:
                bar.end, bar.ongoing = now, True
    else:
        for bar in calls.values():
            bar.detail = "no result recorded"
    return bars


def _escalation_words(payload: dict) -> str:
    action = payload.get("action")
    if action == "raiseRole":
        superseded = [given.get("reviewer", "") for given in payload.get("superseded", [])]
        gone = f"; no longer counts: approval by {', '.join(superseded)}" if superseded else ""
        return f"needs {payload.get('requiredRole', '')}{gone}"
    if action == "expire":
        return "expired"
    if action == "addReviewers":
        return "added " + ", ".join(payload.get("reviewers", []))
    return "told " + (", ".join(payload.get("notified", [])) or "nobody")


def _waiting_label(waitpoint: dict) -> str:
    if waitpoint.get("kind") == "child-run":
        return f"waiting for step {waitpoint.get('nodeId', '')}".rstrip()
    tool = waitpoint.get("toolId")
    return f"waiting for a decision on {tool}" if tool else "waiting"


def _resolution_words(resolution: dict, waiting_label: str) -> tuple[str, str]:
    """What ended a wait, in words: who decided and how, or how the step it waited for ended."""
    if "childStatus" in resolution:
        step = waiting_label.removeprefix("waiting for ")
        return f"waited for {step}: {resolution['childStatus']}", ""
    decision = resolution.get("decision")
    if not decision:
        return "resumed", ""
    reviewer = resolution.get("reviewer")
    if not reviewer:
        return "expired, so rejected", str(resolution.get("rationale", ""))
    words = f"{DECIDED.get(decision, 'decided')} by {reviewer}"
    if "arguments" in resolution:
        words += " (arguments edited)"
    return words, str(resolution.get("rationale", ""))[:200]


def _keep_at_most(groups: list[Group], limit: int) -> int:
    left_out = 0
    for group in groups:
        kept = group.bars[: max(limit, 0)]
        left_out += len(group.bars) - len(kept)
        group.bars, limit = kept, limit - len(kept)
    return left_out


def _place(group: Group, *, first: datetime, seconds: float) -> None:
    """Bars' x and width on the axis, their labels beside or inside them, and their lanes."""
    scale = (PLOT_RIGHT - PLOT_LEFT) / seconds
    for bar in group.bars:
        bar.full_label = bar.label
        bar.width = max(bar.seconds * scale, MIN_BAR_WIDTH)
        bar.x = min(PLOT_LEFT + (bar.start - first).total_seconds() * scale, PLOT_RIGHT - bar.width)
        _place_label(bar)
    lane_ends: list[float] = []
    for bar in sorted(group.bars, key=lambda b: (b.footprint()[0], b.start)):
        lane = _free_lane(lane_ends, *bar.footprint())
        if lane >= MAX_LABELLED_LANES:
            bar.label = ""  # no room for its words: the tooltip keeps them
            lane = _free_lane(lane_ends, *bar.footprint())
        if lane == len(lane_ends):
            lane_ends.append(0.0)
        bar.lane, lane_ends[lane] = lane, bar.footprint()[1]
    group.lanes = max(len(lane_ends), 1)


def _free_lane(lane_ends: list[float], left: float, right: float) -> int:
    for index, end in enumerate(lane_ends):
        if end + LANE_GAP <= left:
            return index
    return len(lane_ends)


def _place_label(bar: Bar) -> None:
    """Inside the bar if it fits, else after it, else before it; shortened if neither side has room."""
    room_after = PLOT_RIGHT - (bar.x + bar.width) - LABEL_GAP
    room_before = bar.x - PLOT_LEFT - LABEL_GAP
    if bar.label_width + 2 * LABEL_GAP <= bar.width:
        bar.label_x, bar.label_anchor, bar.label_inside = bar.x + LABEL_GAP, "start", True
        return
    if bar.label_width > max(room_after, room_before):
        bar.label = shorten(bar.label, max(room_after, room_before))
    if bar.label_width <= room_after:
        bar.label_x, bar.label_anchor = bar.x + bar.width + LABEL_GAP, "start"
    else:
        bar.label_x, bar.label_anchor = bar.x - LABEL_GAP, "end"


def shorten(text: str, room: float) -> str:
    fits = int(room // CHAR_WIDTH)
    return text if len(text) <= fits else text[: max(fits - 1, 0)] + "…"


def _set_heights(group: Group) -> None:
    lanes_top = group.top + (HEADER_HEIGHT if group.title else 0)
    group.title = shorten(group.title, PLOT_RIGHT - PLOT_LEFT)
    for bar in group.bars:
        bar.y = lanes_top + bar.lane * LANE_HEIGHT + (LANE_HEIGHT - BAR_HEIGHT) / 2
        bar.x, bar.width, bar.label_x = round(bar.x, 1), round(bar.width, 1), round(bar.label_x, 1)


def ticks(seconds: float) -> list[Tick]:
    """Marks on the axis at a round step, no more than MAX_TICKS, labelled by time since start."""
    step = next((s for s in NICE_STEPS if seconds / s <= MAX_TICKS), NICE_STEPS[-1])
    scale = (PLOT_RIGHT - PLOT_LEFT) / seconds
    marks = []
    count = int(seconds / step + 1e-9)
    for index in range(count + 1):
        x = PLOT_LEFT + index * step * scale
        label = format_duration(index * step)
        half = len(label) * CHAR_WIDTH / 2
        anchor = "start" if x - half < PLOT_LEFT else "end" if x + half > PLOT_RIGHT else "middle"
        marks.append(Tick(x=round(x, 1), label=label, anchor=anchor))
    return marks


def format_duration(seconds: float) -> str:
    if seconds == 0:
        return "0"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes = seconds / 60
    if minutes < 60:
        return f"{minutes:.3g} min"
    hours, minutes = divmod(round(minutes), 60)
    if hours < 48:
        return f"{hours} h" + (f" {minutes} min" if minutes else "")
    return f"{seconds / 86400:.3g} d"
