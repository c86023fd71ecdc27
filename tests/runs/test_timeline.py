"""The timeline's layout: lanes, labels that never cover each other, an axis, waits to now."""

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from runs.timeline import BAR_HEIGHT, CHAR_WIDTH, MAX_TICKS, PLOT_LEFT, PLOT_RIGHT, ChildRun, build

T0 = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)


@dataclass
class E:
    kind: str
    at: float  # seconds after T0
    payload: dict = field(default_factory=dict)
    duration_ms: int | None = None
    node_id: str = ""

    @property
    def created_at(self):
        return T0 + timedelta(seconds=self.at)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def boxes(timeline):
    """(what, left, top, right, bottom) of every bar and every label drawn."""
    for index, bar in enumerate(timeline.bars):
        yield ("bar", index), bar.x, bar.y, bar.x + bar.width, bar.y + BAR_HEIGHT
        if bar.label:
            left = bar.label_left
            yield ("label", index), left, bar.y, left + len(bar.label) * CHAR_WIDTH, bar.y + BAR_HEIGHT
    for group in timeline.groups:
        if group.title:
            top = group.title_y - 11
            yield ("title", group.title), PLOT_LEFT, top, PLOT_LEFT + len(group.title) * CHAR_WIDTH, top + 13


def collisions(timeline) -> list:
    """Labels that cover another label, a title or another bar (a label inside its own bar is fine)."""
    found = []
    for (a, *box_a), (b, *box_b) in itertools.combinations(list(boxes(timeline)), 2):
        if "label" not in (a[0], b[0]) and "title" not in (a[0], b[0]):
            continue  # bars never share a lane's stretch; labels are what may collide
        if a[1] == b[1] and a[0] != b[0]:
            continue  # a bar and its own label
        if box_a[0] < box_b[2] and box_b[0] < box_a[2] and box_a[1] < box_b[3] and box_b[1] < box_a[3]:
            found.append((a, b))
    return found


def assert_well_drawn(timeline):
    assert collisions(timeline) == []
    for bar in timeline.bars:
        assert PLOT_LEFT <= bar.x <= bar.x + bar.width <= PLOT_RIGHT + 0.1, bar
        if bar.label:
            assert PLOT_LEFT <= bar.label_left <= bar.label_left + bar.label_width <= PLOT_RIGHT + 0.1, bar
        assert bar.y + BAR_HEIGHT <= timeline.height
    assert len(timeline.ticks) <= MAX_TICKS + 1
    tick_boxes = []
    for tick in timeline.ticks:
        width = len(tick.label) * CHAR_WIDTH
        left = {"start": tick.x, "end": tick.x - width, "middle": tick.x - width / 2}[tick.anchor]
        assert PLOT_LEFT <= left <= left + width <= PLOT_RIGHT + 0.1, tick
        tick_boxes.append((left, left + width))
    for (_left_a, right_a), (left_b, _right_b) in itertools.pairwise(tick_boxes):
        assert right_a < left_b, (tick_boxes, timeline.ticks)


def test_concurrent_calls_get_lanes_of_their_own_and_waits_say_who_decided():
    entries = [
        E("model.called", 1.0, {"step": 1, "attempt": 1}, duration_ms=1000),
        E("tool.called", 1.0, {"callId": "a", "toolId": "probe.read"}),
        E("tool.called", 1.0, {"callId": "b", "toolId": "probe.read"}),
        E("tool.completed", 2.0, {"callId": "a"}, duration_ms=1000),
        E("tool.completed", 3.0, {"callId": "b"}, duration_ms=2000),
        E("tool.called", 3.0, {"callId": "c", "toolId": "probe.write"}),
        E("tool.completed", 4.0, {"callId": "c"}, duration_ms=1000),
        E("wait.suspended", 4.0, {"waitpoint": {"kind": "approval", "toolId": "probe.write"}}),
        E(
            "wait.resumed",
            9.0,
            {
                "resolution": {
                    "decision": "approve",
                    "reviewer": "Ada",
                    "arguments": {"n": 1},
                    "rationale": "ok",
                }
            },
        ),
    ]
    timeline = build(entries, now=at(60))
    reads = [bar for bar in timeline.bars if bar.label == "probe.read"]
    assert len({bar.lane for bar in reads}) == 2  # at the same time: side by side
    assert sorted(bar.seconds for bar in reads) == [1.0, 2.0]
    wait = next(bar for bar in timeline.bars if bar.kind == "wait")
    assert (wait.label, wait.seconds, wait.ongoing) == ("approved by Ada (arguments edited)", 5.0, False)
    assert "ok" in wait.tooltip
    model = next(bar for bar in timeline.bars if bar.kind == "model")
    assert (model.start, model.x) == (T0, PLOT_LEFT)
    assert wait.x + wait.width == PLOT_RIGHT
    assert [tick.label for tick in timeline.ticks] == ["0", "2 s", "4 s", "6 s", "8 s"]
    assert_well_drawn(timeline)


def test_a_wait_runs_to_now_while_the_run_is_suspended_and_not_once_it_has_finished():
    entries = [
        E("model.called", 0.5, {"step": 1}, duration_ms=500),
        E("tool.called", 0.5, {"callId": "a", "toolId": "acme-ops.post-update"}),
        E("wait.suspended", 0.5, {"waitpoint": {"kind": "approval", "toolId": "acme-ops.post-update"}}),
    ]
    live = build(entries, now=at(3600), live=True)
    wait = next(bar for bar in live.bars if bar.kind == "wait")
    assert (wait.end, wait.ongoing, wait.label) == (
        at(3600),
        True,
        "waiting for a decision on acme-ops.post-update",
    )
    assert wait.tooltip.endswith("so far")
    assert live.ongoing
    assert live.seconds == 3600
    assert_well_drawn(live)
    finished = build(entries, now=at(3600), live=False)
    assert not finished.ongoing
    assert finished.seconds == 0.5


def test_an_expired_approval_and_a_refusal_say_so():
    entries = [
        E("tool.refused", 0.0, {"callId": "x", "toolId": "probe.delete", "reason": "read-only run"}),
        E("wait.suspended", 0.1, {"waitpoint": {"kind": "approval", "toolId": "probe.write"}}),
        E("wait.resumed", 5.0, {"resolution": {"decision": "reject", "rationale": "expired"}}),
    ]
    labels = [bar.label for bar in build(entries, now=at(9)).bars]
    assert labels == ["refused: probe.delete", "expired, so rejected"]


def test_the_first_model_call_is_not_hidden_under_a_long_wait_and_labels_never_overlap():
    """Many short calls, then a day's wait: every label still has room of its own."""
    entries = []
    for index in range(12):
        entries += [
            E("model.called", index * 0.2 + 0.1, {"step": index}, duration_ms=100),
            E("tool.called", index * 0.2 + 0.1, {"callId": str(index), "toolId": f"acme-ops.lookup-{index}"}),
            E("tool.completed", index * 0.2 + 0.2, {"callId": str(index)}, duration_ms=100),
        ]
    entries += [
        E("wait.suspended", 2.5, {"waitpoint": {"kind": "approval", "toolId": "acme-ops.post-update"}}),
        E("wait.resumed", 86400, {"resolution": {"decision": "reject", "reviewer": "Bob"}}),
    ]
    timeline = build(entries, now=at(90000))
    first_model = timeline.bars[0]
    wait = next(bar for bar in timeline.bars if bar.kind == "wait")
    assert first_model.label == "model"
    assert first_model.lane != wait.lane
    assert [tick.label for tick in timeline.ticks][:3] == ["0", "3 h", "6 h"]
    assert_well_drawn(timeline)


def test_short_calls_one_after_another_move_down_a_lane_when_their_labels_need_the_room():
    entries = []
    for index in range(10):
        entries += [
            E("tool.called", index, {"callId": str(index), "toolId": f"acme-ops.lookup-{index}"}),
            E("tool.completed", index + 0.05, {"callId": str(index)}, duration_ms=50),
        ]
    timeline = build(entries, now=at(20))
    assert_well_drawn(timeline)
    # A label is a little wider than a second: lanes alternate (the last label sits before its bar).
    assert len({bar.lane for bar in timeline.bars}) == 3


def test_child_runs_are_drawn_beneath_on_the_same_axis():
    parent = [
        E("node.started", 0.0, node_id="triage"),
        E("wait.suspended", 0.1, {"waitpoint": {"kind": "child-run", "runId": "c", "nodeId": "triage"}}),
        E("wait.resumed", 4.0, {"resolution": {"childStatus": "completed"}}),
        E("node.completed", 4.0, node_id="triage"),
    ]
    child = [
        E("model.called", 1.0, {"step": 1}, duration_ms=800),
        E("model.called", 3.0, {"step": 2}, duration_ms=500),
    ]
    timeline = build(
        parent,
        now=at(10),
        children=[
            ChildRun(title="step triage: acme.triage (completed)", href="/x", entries=child, live=False)
        ],
    )
    own, nested = timeline.groups
    assert [bar.label for bar in own.bars] == ["step triage", "waited for step triage: completed"]
    assert nested.title == "step triage: acme.triage (completed)"
    assert min(bar.y for bar in nested.bars) > max(bar.y for bar in own.bars)
    assert min(bar.y for bar in nested.bars) > nested.title_y
    assert abs(nested.bars[0].x - (PLOT_LEFT + 0.2 / 4 * (PLOT_RIGHT - PLOT_LEFT))) < 0.1
    assert_well_drawn(timeline)


def test_a_label_too_long_for_either_side_is_shortened_and_kept_whole_in_the_tooltip():
    tool = "acme-ops." + "x" * 200
    entries = [
        E("tool.called", 0.0, {"callId": "a", "toolId": tool}),
        E("tool.completed", 1.0, {"callId": "a"}),
    ]
    entries.append(E("model.called", 2.0, duration_ms=1000))
    timeline = build(entries, now=at(5))
    bar = timeline.bars[0]
    assert bar.label.endswith("…")
    assert len(bar.label) < len(tool)
    assert bar.tooltip.startswith(tool)
    assert_well_drawn(timeline)


def test_no_entries_nothing_drawn():
    timeline = build([], now=T0)
    assert (timeline.groups, timeline.ticks) == ([], [])
