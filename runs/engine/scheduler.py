"""Which of one model message's tool calls may run at the same time.

Pure: given what is known about each call, in the order the model asked,
return batches of call indexes. Batches run one after another; the calls of a
batch run together. The rules:

- consecutive calls to read-only tools share a batch, at most ``MAX_PARALLEL``;
- a call to any other tool runs alone, and so does a read-only call that may
  wait;
- if any call of the message is to a tool that says ``execution="sequential"``,
  every call of the message runs alone, in order (seed 001);
- a call a before-tool guardrail judges starts a new batch, so it starts only
  after every call before it has finished; read-only calls after it may join it;
- once a call needs an approval, it and every later call run alone;
- an agent with ``parallel_tool_calls=False`` runs every call alone.
"""

from collections.abc import Sequence
from dataclasses import dataclass

MAX_PARALLEL = 8


@dataclass(frozen=True, kw_only=True)
class CallTraits:
    read_only: bool
    may_wait: bool = False
    sequential: bool = False
    guarded: bool = False
    needs_approval: bool = False


def plan_batches(
    calls: Sequence[CallTraits], *, parallel: bool = True, max_parallel: int = MAX_PARALLEL
) -> list[list[int]]:
    batches: list[list[int]] = []
    open_batch: list[int] | None = None  # the batch later read-only calls may still join
    one_at_a_time = not parallel or any(call.sequential for call in calls)
    for index, call in enumerate(calls):
        one_at_a_time = one_at_a_time or call.needs_approval
        shareable = not one_at_a_time and call.read_only and not call.may_wait
        if not shareable:
            batches.append([index])
            open_batch = None
        elif call.guarded or open_batch is None or len(open_batch) >= max_parallel:
            open_batch = [index]
            batches.append(open_batch)
        else:
            open_batch.append(index)
    return batches
