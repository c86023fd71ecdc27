"""The supervisor `kindgi dev` runs its processes under: what it stops, and the status it says."""

import os
import signal
import sys

import pytest

from kindgi.cli import processes

SLEEPER = [sys.executable, "-c", "import time; time.sleep(60)"]


def test_a_stop_during_a_reload_stops_the_processes_it_had_started_already(monkeypatch):
    started = []
    real_start = processes.start

    def start(command, env):
        if len(started) == 3:  # the second start of the reload: a stop signal arrives
            raise processes.Stopped(15)
        started.append(real_start(command, env))
        return started[-1]

    reloads = iter([True])
    monkeypatch.setattr(processes, "start", start)
    monkeypatch.setattr(processes, "POLL_SECONDS", 0.01)
    handlers = {number: signal.getsignal(number) for number in processes.STOP_SIGNALS}
    try:
        status = processes.supervise(
            [(SLEEPER, dict(os.environ)), (SLEEPER, dict(os.environ))], every=lambda: next(reloads, False)
        )
    finally:
        for number, handler in handlers.items():  # the supervisor leaves them ignored, as it exits
            signal.signal(number, handler)
    assert status == 0
    assert len(started) == 3
    assert [process.poll() is not None for process in started] == [True, True, True]


@pytest.mark.parametrize(("returncode", "status"), [(3, 3), (0, 1), (-9, 137), (-15, 143)])
def test_a_service_that_ended_is_said_as_a_shell_says_it(returncode, status):
    assert processes.exit_status(returncode) == status
