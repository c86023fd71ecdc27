from runs.engine.scheduler import CallTraits, plan_batches

READ = CallTraits(read_only=True)
WRITE = CallTraits(read_only=False)
WAITING_READ = CallTraits(read_only=True, may_wait=True)
SERIAL_READ = CallTraits(read_only=True, sequential=True)
GUARDED_READ = CallTraits(read_only=True, guarded=True)
GUARDED_WRITE = CallTraits(read_only=False, guarded=True)
ASKING_WRITE = CallTraits(read_only=False, needs_approval=True)
ASKING_READ = CallTraits(read_only=True, needs_approval=True)


def test_consecutive_reads_share_a_batch():
    assert plan_batches([READ, READ, READ]) == [[0, 1, 2]]


def test_at_most_eight_reads_run_at_once():
    assert plan_batches([READ] * 19) == [list(range(8)), list(range(8, 16)), [16, 17, 18]]


def test_a_write_runs_alone_in_order():
    assert plan_batches([READ, READ, WRITE, READ, READ]) == [[0, 1], [2], [3, 4]]
    assert plan_batches([WRITE, WRITE]) == [[0], [1]]


def test_a_read_that_may_wait_runs_alone():
    assert plan_batches([READ, WAITING_READ, READ]) == [[0], [1], [2]]


def test_one_call_to_a_sequential_tool_makes_every_call_of_the_message_run_alone():
    assert plan_batches([READ, SERIAL_READ, READ, READ]) == [[0], [1], [2], [3]]
    assert plan_batches([READ, READ, READ, SERIAL_READ]) == [[0], [1], [2], [3]]


def test_a_guarded_call_waits_for_those_before_it_and_later_reads_may_join_it():
    assert plan_batches([READ, READ, GUARDED_READ, READ, READ]) == [[0, 1], [2, 3, 4]]
    assert plan_batches([READ, GUARDED_WRITE, READ]) == [[0], [1], [2]]
    assert plan_batches([GUARDED_READ, GUARDED_READ]) == [[0], [1]]


def test_after_a_call_that_needs_approval_every_call_runs_alone():
    assert plan_batches([READ, READ, ASKING_WRITE, READ, READ]) == [[0, 1], [2], [3], [4]]
    assert plan_batches([ASKING_READ, READ, READ]) == [[0], [1], [2]]


def test_parallel_tool_calls_off_runs_every_call_alone():
    assert plan_batches([READ, READ, READ], parallel=False) == [[0], [1], [2]]


def test_every_call_is_planned_once_in_the_order_asked():
    calls = [READ, WRITE, READ, READ, GUARDED_READ, READ, WAITING_READ, ASKING_WRITE, READ] * 3
    flat = [index for batch in plan_batches(calls) for index in batch]
    assert flat == list(range(len(calls)))


def test_no_calls_no_batches():
    assert plan_batches([]) == []
