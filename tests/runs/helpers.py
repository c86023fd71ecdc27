from kindgi import ModelReply, ToolCall
from runs.actions import check_start_run
from runs.models import Run
from tests.factories import default_tenant, principal


def calls(*specs: tuple[str, str, dict]) -> ModelReply:
    """A model reply asking for tool calls: (call id, tool id, arguments) each."""
    return ModelReply(tool_calls=tuple(ToolCall(id=i, tool_id=t, arguments=a) for i, t, a in specs))


def reads(tool_id: str, *labels: str, prefix: str = "") -> list[tuple[str, str, dict]]:
    return [(f"{prefix}{label}", tool_id, {"label": label}) for label in labels]


def answer(text: str = "done") -> ModelReply:
    return ModelReply(text=text)


def start(agent: str, message: str = "go", **options) -> Run:
    if "acting_user" not in options:
        options.setdefault("principal", principal())
    return check_start_run(tenant=default_tenant(), agent_id=agent, input={"userMessage": message}, **options)


def overlapping(timeline, *labels: str) -> bool:
    """Every one of these calls started before any of them ended."""
    intervals = [timeline.interval(label) for label in labels]
    return max(start for start, _ in intervals) < min(end for _, end in intervals)


def before(timeline, first: str, second: str) -> bool:
    """``first`` ended before ``second`` started."""
    return timeline.interval(first)[1] <= timeline.interval(second)[0]
