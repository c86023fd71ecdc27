"""`kindgi dev`: a local server, ready to use in one command.

It drives the project's own Django commands in subprocesses (the CLI itself imports no Django):
migrate, load the packs, make sure the development admin, tenant, reviewer and API token exist,
save the URL and token for the next `kindgi` command, then serve HTTP and WebSockets.
"""

import atexit
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from kindgi.cli import processes
from kindgi.cli.config import load_saved, save
from kindgi.cli.errors import OK, USAGE_ERROR, CliError


def _django_env() -> dict[str, str]:
    return os.environ | {
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "kindgi_site.settings")
    }


def _django(*arguments: str, capture: bool = False) -> str:
    env = _django_env()
    result = processes.run([*DJANGO, *arguments], env, text=True, stdout=subprocess.PIPE if capture else None)
    if result.returncode != 0:
        raise CliError(f"`django-admin {' '.join(arguments)}` failed (exit {result.returncode}); see above")
    return result.stdout or ""


def ports_free(host: str, port: int, mail_port: int) -> None:
    """Refuse to start anything when a port is taken: one line naming it, and what to change
    (``make run``'s variable, or the command's option), rather than a half-started server."""
    for where, number, variable, option in (
        (host, port, "PORT", "--port"),
        ("127.0.0.1", mail_port, "MAIL_PORT", "--mail-port"),
    ):
        if not number:
            continue
        with socket.socket(socket.AF_INET6 if ":" in where else socket.AF_INET) as probe:
            # As the servers bind: a port only lingering after a closed connection is free to them.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((where, number))
            except OSError as error:
                what = "the web server's" if variable == "PORT" else "the SMTP receiver's"
                raise CliError(
                    f"port {number} on {where} ({what}) is taken ({error.strerror}): choose another with "
                    f"{variable}=… (make run) or {option}"
                ) from None


def serve(*, host: str, port: int, mail_port: int = 2525, packs: Sequence[str] = ()) -> int:
    ports_free(host, port, mail_port)
    processes.on_stop_signals()
    try:
        folders = [pack_folder(path) for path in packs]
        if folders:
            _load_from(folders)
        _django("migrate", "--no-input", "--verbosity", "0")
        _django("load_packs")
        _django("create_dev_admin")
        token = _django("dev_token", "--reuse", load_saved().get("token") or "", capture=True).strip()
    except processes.Stopped:
        return OK
    url = f"http://{host}:{port}"
    # The links in notification mails lead here, unless told otherwise.
    os.environ.setdefault("KINDGI_PUBLIC_URL", url)
    path = save(url, token)
    print(banner(url, mail_port, saved_to=path), flush=True)
    # Beside the web server, stopped with it: the sweeper, which expires and escalates approvals,
    # mails reviewers, starts scheduled runs, retries webhooks and recovers runs on its own, and
    # the SMTP receiver.
    services: list[processes.Service] = [(SWEEPER, _django_env())]
    if mail_port:
        services.append(
            ([*DJANGO, "mail_serve", "--host", "127.0.0.1", "--port", str(mail_port)], _django_env())
        )
    web = [
        *PYTHON,
        "-m",
        "kindgi_site.web",
        "-b",
        host,
        "-p",
        str(port),
        "kindgi_site.asgi:application",
    ]
    # Lets /metrics answer this machine without a token (kindgi_site.metrics).
    services.append((web, _django_env() | {"KINDGI_DEV_SERVER": "true"}))
    return processes.supervise(services, every=_reloader(folders) if folders else None)


def banner(url: str, mail_port: int, *, saved_to: Path) -> str:
    """What `kindgi dev` says once it is ready: where everything is."""
    mail = (
        f"mail to a mailbox's address at smtp://127.0.0.1:{mail_port} starts its run; "
        "mail Kindgi sends is printed here"
        if mail_port
        else "no SMTP receiver (--mail-port 0); mail Kindgi sends is printed here"
    )
    return "\n".join(
        [
            f"Kindgi is serving on {url}/",
            f"  console   {url}/console/   (review approvals, watch runs)",
            f"  sign in   {url}/console/login/",
            f"  admin     {url}/admin/",
            f"  API docs  {url}/api/docs/",
            f"  mail      {mail}",
            f"Saved {url} and an API token to {saved_to}:",
            "  `kindgi runs start …` in another terminal now just works.",
            "Stop with Ctrl-C: it stops every process this started.",
        ]
    )


# -P: the folder it is started from is not put on the path, where a folder beside it (a checkout
# named kindgi, a tools/ folder) would shadow Kindgi's own packages.
PYTHON = [sys.executable, "-P"]
DJANGO = [*PYTHON, "-m", "django"]
SWEEPER = [*DJANGO, "run_sweeps", "--every", "0"]


def pack_folder(path: str) -> Path:
    """A pack's folder: a Python package (``__init__.py``) whose name is a module name."""
    folder = Path(path).expanduser().resolve()
    if not (folder / "__init__.py").is_file():
        raise CliError(f"--pack {path}: {folder} is not a pack's folder (it has no __init__.py)", USAGE_ERROR)
    if not folder.name.isidentifier():
        raise CliError(
            f"--pack {path}: the folder's name {folder.name!r} is not a Python package name", USAGE_ERROR
        )
    return folder


def _load_from(folders: Sequence[Path]) -> None:
    """Every process this starts imports the packs from those folders."""
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(importable(folders)), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    extra = [*filter(None, os.environ.get("KINDGI_EXTRA_PACKS", "").split(",")), *(f.name for f in folders)]
    os.environ["KINDGI_EXTRA_PACKS"] = ",".join(dict.fromkeys(extra))


def importable(folders: Sequence[Path]) -> Path:
    """A folder that holds only a link to each pack's folder, to put on the Python path in place
    of the packs' parents: a parent may hold other folders (a checkout of Kindgi named ``kindgi``,
    a ``tools`` folder) that would shadow Kindgi's own packages."""
    names = [folder.name for folder in folders]
    if len(set(names)) != len(names):
        raise CliError(f"two packs' folders have the same name: {', '.join(names)}", USAGE_ERROR)
    where = Path(tempfile.mkdtemp(prefix="kindgi-packs-"))
    atexit.register(shutil.rmtree, where, ignore_errors=True)
    for folder in folders:
        (where / folder.name).symlink_to(folder, target_is_directory=True)
    return where


def _reloader(folders: Sequence[Path]):
    """When a pack's file changes, load the packs again: if they load, the catalog is updated and
    every process (web server, sweeper, SMTP receiver) restarts with the new code; if not, the
    errors are printed and the last good version keeps serving."""
    seen = _snapshot(folders)

    def changed() -> bool:
        nonlocal seen
        now = _snapshot(folders)
        if now == seen:
            return False
        seen = now
        print(f"A file changed in {', '.join(map(str, folders))}: loading the packs again", flush=True)
        if processes.run([*DJANGO, "load_packs"], _django_env()).returncode != 0:
            print("The packs did not load (see above): still serving the last version that did", flush=True)
            return False
        return True

    return changed


def _snapshot(folders: Sequence[Path]) -> dict[str, tuple[int, int]]:
    """Each Python file in the packs' folders, with its modification time and size."""
    files = {}
    for folder in folders:
        for path in folder.rglob("*.py"):
            if "__pycache__" not in path.parts:
                try:
                    stat = path.stat()
                except FileNotFoundError:
                    continue
                files[str(path)] = (stat.st_mtime_ns, stat.st_size)
    return files


# The queues a worker serves (KINDGI_TASKS); `immediate` executes runs in the web process.
QUEUED = ("db", "rq", "celery")


def _exec(*arguments: str) -> None:
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "kindgi_site.settings")
    }
    os.execve(sys.executable, [*PYTHON, *arguments], env)


def serve_production(*, host: str, port: int) -> int:
    """One web process (HTTP and WebSockets). Run several behind a proxy; settings come from the
    environment (README, "Running in production"). Not with daphne's ``--proxy-headers``: it takes
    the client's address from X-Forwarded-For whoever sends it, and the sign-in limits would
    count what a client says it is; Kindgi reads the header itself, from trusted proxies only
    (``KINDGI_TRUSTED_PROXIES``, core.addresses)."""
    _exec("-m", "kindgi_site.web", "-b", host, "-p", str(port), "kindgi_site.asgi:application")
    return OK  # not reached


def mail_serve(*, host: str, port: int) -> int:
    """The SMTP receiver: mail to a mailbox's address starts its run."""
    _exec("-m", "django", "mail_serve", "--host", host, "--port", str(port))
    return OK  # not reached


def worker(*, backend: str | None, queue: str, metrics_port: int | None = None) -> int:
    """One worker of the queue KINDGI_TASKS names (db, rq or celery)."""
    configured = os.environ.get("KINDGI_TASKS", "").strip()
    if backend and configured and backend != configured:
        raise CliError(
            f"--backend {backend} but KINDGI_TASKS={configured}: a worker serves the queue the web "
            "processes queue runs in, so the two must agree",
            USAGE_ERROR,
        )
    backend = backend or configured
    if backend not in QUEUED:
        raise CliError(
            "a worker serves a queue: set KINDGI_TASKS to db (and DATABASE_URL), or to rq or celery "
            "(and REDIS_URL) first, or give --backend",
            USAGE_ERROR,
        )
    if backend != "db" and not os.environ.get("REDIS_URL", "").strip():
        raise CliError(
            f"KINDGI_TASKS={backend} queues runs in Redis: set REDIS_URL (redis://host:6379/0)", USAGE_ERROR
        )
    os.environ["KINDGI_TASKS"] = backend
    metrics = ["--metrics-port", str(metrics_port)] if metrics_port is not None else []
    if backend == "db":
        _exec("-m", "django", "run_worker", "--no-reload", "--queue-name", queue, *metrics)
    else:
        _exec("-m", "django", "run_queue_worker", "--queue-name", queue, *metrics)
    return OK  # not reached


def sweeper() -> int:
    """The sweeps, for ever, every KINDGI_SWEEP_SECONDS; one process at a time holds their lease."""
    _exec("-m", "django", "run_sweeps", "--every", "0")
    return OK  # not reached
