"""`kindgi dev`: a local server, ready to use in one command.

It drives the project's own Django commands in subprocesses (the CLI itself imports no Django):
migrate, load the packs, make sure the development admin, tenant, reviewer and API token exist,
save the URL and token for the next `kindgi` command, then serve HTTP and WebSockets.
"""

import os
import subprocess
import sys

from kindgi.cli.config import load_saved, save
from kindgi.cli.errors import OK, USAGE_ERROR, CliError


def _django_env() -> dict[str, str]:
    return os.environ | {
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "kindgi_site.settings")
    }


def _django(*arguments: str, capture: bool = False) -> str:
    env = _django_env()
    result = subprocess.run(
        [sys.executable, "-m", "django", *arguments],
        env=env,
        text=True,
        stdout=subprocess.PIPE if capture else None,
    )
    if result.returncode != 0:
        raise CliError(f"`django-admin {' '.join(arguments)}` failed (exit {result.returncode}); see above")
    return result.stdout or ""


def serve(*, host: str, port: int, mail_port: int = 2525) -> int:
    _django("migrate", "--no-input", "--verbosity", "0")
    _django("load_packs")
    _django("create_dev_admin")
    token = _django("dev_token", "--reuse", load_saved().get("token") or "", capture=True).strip()
    url = f"http://{host}:{port}"
    # The links in notification mails lead here, unless told otherwise.
    os.environ.setdefault("KINDGI_PUBLIC_URL", url)
    path = save(url, token)
    print(
        f"Saved {url} and an API token to {path}: `kindgi runs start …` in another terminal now just works."
    )
    print(f"Kindgi is serving on {url}/ (admin at {url}/admin/, API docs at {url}/api/docs/)", flush=True)
    # Beside the web server, in the same process group (Ctrl-C stops them all): the sweeper, which
    # expires and escalates approvals, mails reviewers, starts scheduled runs, retries webhooks and
    # recovers runs on its own, and the SMTP receiver.
    subprocess.Popen([sys.executable, "-m", "django", "run_sweeps", "--every", "0"], env=_django_env())
    if mail_port:
        subprocess.Popen(
            [sys.executable, "-m", "django", "mail_serve", "--host", "127.0.0.1", "--port", str(mail_port)],
            env=_django_env(),
        )
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "kindgi_site.settings"),
        # Lets /metrics answer this machine without a token (kindgi_site.metrics).
        "KINDGI_DEV_SERVER": "true",
    }
    os.execve(
        sys.executable,
        [sys.executable, "-m", "daphne", "-b", host, "-p", str(port), "kindgi_site.asgi:application"],
        env,
    )
    return OK  # not reached: daphne replaced this process


def _exec(*arguments: str) -> None:
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "kindgi_site.settings")
    }
    os.execve(sys.executable, [sys.executable, *arguments], env)


def serve_production(*, host: str, port: int) -> int:
    """One web process (HTTP and WebSockets). Run several behind a proxy; settings come from the
    environment (README, "Running in production")."""
    _exec("-m", "daphne", "-b", host, "-p", str(port), "--proxy-headers", "kindgi_site.asgi:application")
    return OK  # not reached


def mail_serve(*, host: str, port: int) -> int:
    """The SMTP receiver: mail to a mailbox's address starts its run."""
    _exec("-m", "django", "mail_serve", "--host", host, "--port", str(port))
    return OK  # not reached


def worker(*, queue: str, metrics_port: int | None = None) -> int:
    """One worker: executes and resumes runs queued with KINDGI_TASKS=db."""
    if os.environ.get("KINDGI_TASKS") != "db":
        raise CliError(
            "a worker serves the database queue: set KINDGI_TASKS=db (and DATABASE_URL) first", USAGE_ERROR
        )
    metrics = ["--metrics-port", str(metrics_port)] if metrics_port is not None else []
    _exec("-m", "django", "run_worker", "--no-reload", "--queue-name", queue, *metrics)
    return OK  # not reached
