from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from runs.timeline import WIDTH, build

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


def test_concurrent_calls_sit_side_by_side_and_waits_say_who_decided():
    entries = [
        E("model.called", 1.0, {"step": 1, "attempt": 1}, duration_ms=1000),
        E("tool.called", 1.0, {"callId": "a", "toolId": "probe.read"}),
        E("tool.called", 1.0, {"callId": "b", "toolId": "probe.read"}),
        E("tool.completed", 2.0, {"callId": "a"}, duration_ms=1000),
        E("tool.completed", 3.0, {"callId": "b"}, duration_ms=2000),
        E("tool.called", 3.0, {"callId": "c", "toolId": "probe.write"}),
        E("tool.completed", 4.0, {"callId": "c"}, duration_ms=1000),
        E("wait.suspended", 4.0),
        E("wait.resumed", 9.0, {"resolution": {"decision": "approve", "reviewer": "Ada"}}),
    ]
    bars, height = build(entries)
    reads = [bar for bar in bars if bar.label == "probe.read"]
    assert sorted(bar.lane for bar in reads) == [1, 2]  # overlapping: side by side
    write = next(bar for bar in bars if bar.label == "probe.write")
    assert write.lane == 1  # lane 1 was free again
    wait = next(bar for bar in bars if bar.kind == "wait")
    assert (wait.label, wait.seconds) == ("approved by Ada", 5.0)
    model = next(bar for bar in bars if bar.kind == "model")
    assert (model.start, model.x) == (T0, 0.0)
    assert wait.x + wait.width == WIDTH
    assert height == 3 * 26 + 8
    assert sorted(bar.seconds for bar in reads) == [1.0, 2.0]


def test_no_entries_no_bars():
    assert build([]) == ([], 26)
