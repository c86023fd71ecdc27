"""docs/operations.md's walk-through, run as written: from an empty PostgreSQL database with
KINDGI_DEBUG=false to a console one signs in to and a gated run approved through the API.

Only the database, the port and the Redis database are changed, so that it runs beside other
tests; every other line is the document's."""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import uuid

import httpx
import psycopg
import pytest
from django.db import connection

from tests.live_server import ROOT, free_port

pytestmark = [pytest.mark.postgres, pytest.mark.django_db]

DOCUMENT = ROOT / "docs" / "operations.md"
WALK_THROUGH = re.compile(r"### From an empty database to a first approval\n.*?```sh\n(.*?)```", re.S)


def walk_through() -> str:
    return WALK_THROUGH.search(DOCUMENT.read_text()).group(1)


@pytest.fixture
def empty_database():
    """A database of its own on the test server, empty, dropped afterwards."""
    settings = connection.settings_dict
    name = f"kindgi_walk_{uuid.uuid4().hex[:12]}"
    server = f"host={settings['HOST']} port={settings['PORT']} user={settings['USER']} dbname=postgres"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"postgres://{settings['USER']}@{settings['HOST']}:{settings['PORT']}/{name}"
    with psycopg.connect(server, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_the_production_walk_through_ends_with_a_gated_run_approved_through_the_api(empty_database, tmp_path):
    assert shutil.which("curl"), "the walk-through waits for the server with curl"
    port = free_port()
    script = walk_through()
    for documented, here in [
        ("postgres://postgres@127.0.0.1:5432/kindgi", empty_database),
        ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/11"),
        ("8001", str(port)),
    ]:
        assert documented in script, documented
        script = script.replace(documented, here)
    # What the document's shell leaves behind, for the checks below.
    script += '\nprintf "%s\\n%s\\n" "$run" "$KINDGI_TOKEN" > "$WALK_RESULT"\n'
    result_file, out, err = tmp_path / "result", tmp_path / "stdout", tmp_path / "stderr"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("KINDGI_", "DJANGO_"))
        and key not in {"DATABASE_URL", "REDIS_URL", "SECRET_KEY"}
    }
    env |= {"WALK_RESULT": str(result_file), "KINDGI_CONFIG": str(tmp_path / "cli.json")}
    with out.open("w") as stdout, err.open("w") as stderr:
        shell = subprocess.Popen(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=ROOT,
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,  # its web process and worker too, to stop them after
        )
    try:
        try:
            status = shell.wait(timeout=300)
        except subprocess.TimeoutExpired:
            status = "timed out"
        said = out.read_text()
        assert status == 0, f"{status}\n{said}\n{err.read_text()[-5000:]}"

        run_id, token = result_file.read_text().split()
        base = f"http://localhost:{port}"
        api = httpx.Client(
            base_url=f"{base}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30
        )
        run = api.get(f"/runs/{run_id}").json()
        assert (run["status"], run["principal"]) == ("completed", "ada")
        assert run["output"]["reply"].startswith("Posted")
        (approval,) = api.get("/approvals", params={"runId": run_id}).json()["items"]
        assert approval["status"] == "approved"
        assert (approval["decision"]["reviewer"], approval["decision"]["rationale"]) == (
            "ada",
            "First run in production",
        )

        # The console, signed in as the tenant's admin with the password create_tenant printed once.
        password = re.search(r"as 'ada' with password '([^']+)' \(shown only this once\)", said).group(1)
        assert_signs_in(base, "ada", password)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(shell.pid, signal.SIGTERM)


def assert_signs_in(base: str, username: str, password: str) -> None:
    """Sign in over plain HTTP to localhost, as a browser does with the Secure cookies it is given
    there (httpx's cookie jar keeps Secure cookies for HTTPS, so they are carried by hand)."""
    with httpx.Client(base_url=base, timeout=30) as browser:
        form = browser.get("/console/login/")
        assert form.status_code == 200
        csrf = form.cookies["csrftoken"]
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text).group(1)
        signed_in = browser.post(
            "/console/login/",
            data={"username": username, "password": password, "csrfmiddlewaretoken": token},
            headers={"Cookie": f"csrftoken={csrf}", "Referer": f"{base}/console/login/"},
        )
        assert signed_in.status_code == 302, signed_in.text[:500]
        session = signed_in.cookies["sessionid"]
        queue = browser.get("/console/queue/", headers={"Cookie": f"sessionid={session}; csrftoken={csrf}"})
        assert queue.status_code == 200
        assert "ada" in queue.text
