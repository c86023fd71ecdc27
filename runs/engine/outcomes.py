"""How a piece of a run ends: it completed, it waits, or it failed."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, kw_only=True)
class Completed:
    output: Any


@dataclass(frozen=True, kw_only=True)
class Suspended:
    """The run waits on ``waitpoint`` (an approval, a child run …); ``node_id`` is the waiting step."""

    waitpoint: dict[str, Any]
    node_id: str = ""
    # The run never waited on this subject of this call before (its journal says so): whatever
    # records the wait (an approval) cannot exist yet, and need not be looked for.
    first: bool = False


@dataclass(frozen=True, kw_only=True)
class Failed:
    message: str


Outcome = Completed | Suspended | Failed
