"""What a piece of work costs in CPU time, summed over every process of the system that did it,
read from /proc (Linux): a process's own user and system time, its live descendants', and
that of descendants that ended and were waited for (``cutime``, ``cstime``)."""

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _times(pid: int) -> tuple[int, list[int]]:
    """Clock ticks of ``pid`` and its waited-for children, and its live children's pids."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command's name, which may hold spaces
    ticks = sum(int(field) for field in fields[11:15])  # utime, stime, cutime, cstime
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(child) for child in (task / "children").read_text().split()]
    return ticks, children


def family_seconds(root: int) -> float:
    """CPU seconds of ``root`` and every process under it, live or ended."""
    ticks, waiting = 0, [root]
    while waiting:
        pid = waiting.pop()
        try:
            own, children = _times(pid)
        except (FileNotFoundError, ProcessLookupError):
            continue  # it ended meanwhile: its time is its parent's once waited for
        ticks += own
        waiting += children
    return ticks / _TICKS


def seconds_by_family(families: Mapping[str, Iterable[int]]) -> dict[str, float]:
    return {name: sum(family_seconds(pid) for pid in pids) for name, pids in families.items()}


def postgres_server_pid() -> int:
    """The PostgreSQL server's main process (the parent of this connection's backend): its
    family is every backend and background process of the server."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (backend,) = cursor.fetchone()
    stat = Path(f"/proc/{backend}/stat").read_text()
    return int(stat[stat.rindex(")") + 2 :].split()[1])


def redis_server_pid(url: str) -> int:
    import redis

    return int(redis.Redis.from_url(url).info("server")["process_id"])
