"""The processes `kindgi dev` starts, kept together: they stop when it stops, however it stops.

On SIGINT or SIGTERM it stops every process it started (and waits for them); if it is killed
outright, each of them is sent SIGTERM by the kernel (Linux's parent-death signal), so that no
web server, sweeper or SMTP receiver is left serving a checkout nobody runs any more. When one
of them ends on its own, the others are stopped too: a server half up is worse than none.
"""

import ctypes
import ctypes.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

Service = tuple[list[str], dict[str, str]]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
GRACE_SECONDS = 10
POLL_SECONDS = 0.2


class Stopped(Exception):
    """The supervisor was asked to stop (SIGINT or SIGTERM)."""

    def __init__(self, number: int):
        super().__init__(signal.Signals(number).name)
        self.number = number


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """What runs in each child before it starts (Linux): ask the kernel for SIGTERM when this
    process's parent dies, and end at once if it already has."""
    if not sys.platform.startswith("linux"):
        return None
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    set_parent_death_signal = 1  # PR_SET_PDEATHSIG, <linux/prctl.h>

    def watch() -> None:
        libc.prctl(set_parent_death_signal, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(1)

    return watch


def start(command: Sequence[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(list(command), env=env, preexec_fn=_die_with_parent(os.getpid()))


def run(command: Sequence[str], env: dict[str, str], **options) -> subprocess.CompletedProcess:
    """A command run to its end, which dies with this process too (migrate, load_packs…)."""
    return subprocess.run(list(command), env=env, preexec_fn=_die_with_parent(os.getpid()), **options)


def stop(processes: Sequence[subprocess.Popen]) -> None:
    for process in processes:
        if process.poll() is None:
            process.terminate()
    deadline = time.monotonic() + GRACE_SECONDS
    for process in processes:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _start_into(processes: list[subprocess.Popen], services: Sequence[Service]) -> None:
    """Start each service, kept in ``processes`` as soon as it started: a stop signal between
    two starts finds the first one there, to stop."""
    for command, env in services:
        processes.append(start(command, env))


def exit_status(returncode: int) -> int:
    """A child's end as this process's exit status: its own code, or 128 plus the signal that
    ended it, as a shell says (``subprocess`` gives minus the signal); never 0 for a failure."""
    if returncode < 0:
        return 128 - returncode
    return returncode or 1


def on_stop_signals() -> None:
    """From now on, SIGINT and SIGTERM raise `Stopped` where this process is, so that the
    ``finally`` that stops the children runs."""

    def raise_stopped(number, frame):
        raise Stopped(number)

    for number in STOP_SIGNALS:
        signal.signal(number, raise_stopped)


def supervise(services: Sequence[Service], *, every: Callable[[], bool] | None = None) -> int:
    """Start the services and keep them running until a stop signal or until one of them ends.

    ``every``, if given, is called about once a second; when it returns true the services are
    restarted (a pack changed and loaded). Returns the exit status for the CLI: 0 when asked to
    stop, else the status of the service that ended."""
    on_stop_signals()
    processes: list[subprocess.Popen] = []
    try:
        _start_into(processes, services)
        last_check = time.monotonic()
        while True:
            time.sleep(POLL_SECONDS)
            for process, (command, _) in zip(processes, services, strict=True):
                status = process.poll()
                if status is not None:
                    what = " ".join(
                        command[command.index("-m") + 1 :][:2] if "-m" in command else command[:1]
                    )
                    print(
                        f"{what} ended (exit {status}): stopping the others",
                        file=sys.stderr,
                        flush=True,
                    )
                    return exit_status(status)
            if every is not None and time.monotonic() - last_check >= 1.0:
                last_check = time.monotonic()
                if every():
                    stop(processes)
                    processes.clear()
                    _start_into(processes, services)
                    print("Reloaded: serving the new version", flush=True)
    except Stopped:
        return 0
    finally:
        # No second signal may cut the stopping short.
        for number in STOP_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        stop(processes)
