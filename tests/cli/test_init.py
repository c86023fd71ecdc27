"""`kindgi init`: a new pack that loads, passes its own tests, and suspends at its gate, as written;
and `kindgi dev --pack`, which serves it and reloads the catalog when its files change."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from django.core.management import call_command

from runs.models import RunStatus
from tests.dev_server import KINDGI, dev_env, start_dev
from tests.factories import default_tenant, principal
from tests.live_server import ROOT, free_port


def kindgi_init(*arguments: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run([*KINDGI, "init", *arguments], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.fixture
def demo_pack(tmp_path):
    made = kindgi_init("demo-pack", "--dir", str(tmp_path), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    return tmp_path / "demo_pack", made.stdout


def test_init_writes_a_pack_with_tests_and_skills_and_says_how_to_load_it(demo_pack, tmp_path):
    folder, printed = demo_pack
    assert sorted(path.name for path in folder.iterdir()) == [
        "AGENTS.md",
        "README.md",
        "__init__.py",
        "agents.py",
        "conftest.py",
        "flows.py",
        "skills",
        "tests",
        "tools.py",
    ]
    assert sorted(path.name for path in (folder / "skills").iterdir()) == [
        "declare-effects.md",
        "gate-a-tool.md",
        "mark-a-tool-read-only.md",
        "put-an-agent-in-a-flow.md",
        "test-with-a-scripted-model.md",
        "use-a-connection.md",
    ]
    # A coding agent asked to "mark it read-only" is sent to exactly the guide that says how.
    agents_md = (folder / "AGENTS.md").read_text()
    assert '"mark it read-only" | `skills/mark-a-tool-read-only.md`' in agents_md
    assert "mutating=False" in (folder / "skills" / "mark-a-tool-read-only.md").read_text()
    assert "__PACK__" not in "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    assert (
        'export KINDGI_PACKS="${KINDGI_PACKS:-packs.my_pack,packs.acme_ops,packs.kindgi_mail},demo_pack" '
        f'PYTHONPATH={tmp_path}"${{PYTHONPATH:+:$PYTHONPATH}}"' in printed
    )


def test_the_generated_tests_pass_as_written(demo_pack, tmp_path):
    folder, _ = demo_pack
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(folder)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "7 passed" in result.stdout


@pytest.mark.django_db(transaction=True)
def test_added_to_kindgi_packs_it_loads_and_its_gated_agent_suspends(
    demo_pack, tmp_path, settings, monkeypatch
):
    from approvals.models import Approval
    from runs.actions import check_start_run
    from tools.models import Agent, Tool

    monkeypatch.syspath_prepend(str(tmp_path))
    settings.KINDGI_PACKS = [*settings.KINDGI_PACKS, "demo_pack"]
    try:
        call_command("load_packs", verbosity=0)
        assert Tool.objects.get(key="demo-pack.read-note").is_read_only
        assert not Tool.objects.get(key="demo-pack.write-note").is_read_only
        assert Agent.objects.filter(key="demo-pack.assistant").exists()
        run = check_start_run(
            tenant=default_tenant(),
            principal=principal(default_tenant()),
            agent_id="demo-pack.assistant",
            input={"userMessage": "write todo: milk"},
        )
        assert run.status == RunStatus.SUSPENDED
        approval = Approval.objects.get(run=run)
        assert (approval.tool_key, approval.arguments) == (
            "demo-pack.write-note",
            {"name": "todo", "text": "milk"},
        )
    finally:
        for name in [name for name in sys.modules if name == "demo_pack" or name.startswith("demo_pack.")]:
            del sys.modules[name]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["Demo"], "'Demo' is not a pack name"),
        (["9lives"], "must start with a letter"),
        (["json"], "would hide another of that name"),
        (["demo-pack", "--dir", "nowhere"], "is not a folder"),
    ],
)
def test_init_refuses_what_it_cannot_make_and_writes_nothing(tmp_path, arguments, message):
    result = kindgi_init(*arguments, cwd=tmp_path)
    assert result.returncode == 2
    assert message in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_init_never_writes_over_a_folder(demo_pack, tmp_path):
    folder, _ = demo_pack
    (folder / "tools.py").write_text("# mine\n")
    result = kindgi_init("demo-pack", "--dir", str(tmp_path), cwd=tmp_path)
    assert result.returncode == 2
    assert "already exists" in result.stderr
    assert (folder / "tools.py").read_text() == "# mine\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["demo_pack"]


def test_kindgi_dev_serves_a_pack_from_its_folder_and_reloads_it_when_it_changes(demo_pack, tmp_path):
    folder, _ = demo_pack
    env = dev_env(tmp_path)
    server = start_dev(env, free_port(), "--mail-port", "0", "--pack", str(folder))
    log = (tmp_path / "dev.log").read_text
    try:
        assert _agent(env)["description"] == "Reads notes, and writes them once a person says yes."
        assert _reply(env, "hello") == "You said: hello"
        started = _kindgi(
            env, "runs", "start", "--agent=demo-pack.assistant", '--input={"userMessage": "write a: b"}'
        )
        assert started["status"] == "suspended"

        agents = folder / "agents.py"
        # The catalog and the code that runs are both the new version's.
        agents.write_text(
            agents.read_text()
            .replace("Reads notes, and writes them", "Notes, written")
            .replace('f"You said: {message}"', 'f"Heard: {message}"')
        )
        _wait_for(lambda: _agent(env)["description"] == "Notes, written once a person says yes.")
        _wait_for(lambda: _reply(env, "hello") == "Heard: hello")

        # A change that breaks the pack: the errors are told, the last good version keeps serving.
        agents.write_text(agents.read_text().replace('id="demo-pack.assistant"', 'id="Bad Id"'))
        _wait_for(lambda: "still serving the last version that did" in log())
        assert "id 'Bad Id' must be '<pack>.<name>'" in log()
        assert _agent(env)["description"] == "Notes, written once a person says yes."
        assert _reply(env, "again") == "Heard: again"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=20)


def _kindgi(env, *arguments: str) -> dict:
    result = subprocess.run([*KINDGI, *arguments], env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout)


def _reply(env, message: str) -> str:
    run = _kindgi(
        env, "runs", "start", "--agent=demo-pack.assistant", f'--input={{"userMessage": "{message}"}}'
    )
    return run["output"]["reply"]


def _agent(env) -> dict:
    return _kindgi(env, "agents", "get", "demo-pack.assistant")


def _wait_for(condition, seconds: float = 60) -> None:
    """Until ``condition()`` holds; while the server restarts, a command may fail on the way."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if condition():
                return
        except AssertionError:
            pass
        assert time.monotonic() < deadline, "it did not happen in time"
        time.sleep(0.5)


def test_kindgi_test_runs_a_fresh_packs_tests_from_anywhere(demo_pack, tmp_path):
    """From the project's own folder (whose pytest settings are a Django site's) too, and with
    folders beside the pack that share a name with Kindgi's packages (a checkout cloned as
    ``kindgi``, a ``tools`` folder): neither the pack's parent nor where it runs from is put on
    the path."""
    folder, _ = demo_pack
    for beside in ("kindgi", "tools"):
        (tmp_path / beside).mkdir()
        (tmp_path / beside / "README.md").write_text("not a package")
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_SETTINGS_MODULE"}
    scratch = tmp_path / "scratch"  # where the folder of links to the pack is made, and removed
    scratch.mkdir()
    env["TMPDIR"] = str(scratch)
    kindgi = [sys.executable, "-m", "kindgi.cli", "test"]
    for where in (tmp_path, ROOT):
        result = subprocess.run(
            [*kindgi, str(folder), "-q"], cwd=where, env=env, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stdout + result.stderr
        assert "7 passed" in result.stdout
    chosen = subprocess.run(
        [*kindgi, str(folder), "-q", "-k", "read_runs_without"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "1 passed, 6 deselected" in chosen.stdout, chosen.stdout

    # A test that fails is exit 1, with pytest's own report.
    (folder / "tests" / "test_broken.py").write_text("def test_broken():\n    assert 1 == 2\n")
    failed = subprocess.run(
        [*kindgi, str(folder), "-q"], env=env, capture_output=True, text=True, timeout=120
    )
    assert failed.returncode == 1
    assert "1 failed, 7 passed" in failed.stdout

    # pytest's other outcomes keep their codes: 5, no test was found.
    none = subprocess.run(
        [*kindgi, str(folder), "-q", "-k", "no_such_test"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert none.returncode == 5, none.stdout
    assert list(scratch.iterdir()) == []


def test_kindgi_test_names_what_is_wrong(tmp_path, monkeypatch, capsys):
    import importlib.util

    from kindgi.cli import main

    assert main(["test", str(tmp_path)]) == 2
    assert "is not a pack's folder (it has no __init__.py)" in capsys.readouterr().err
    (tmp_path / "__init__.py").write_text("")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "pytest" else real(name))
    assert main(["test", str(tmp_path)]) == 2
    assert "pytest is not installed beside Kindgi: `make run` (or `make install`) installs it" in (
        capsys.readouterr().err
    )


def test_make_run_installs_the_pytest_kindgi_test_uses(tmp_path):
    import shutil
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(requirement.startswith("pytest>=") for requirement in extras["testing"])
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").touch()
    (tmp_path / "pyproject.toml").touch()
    planned = subprocess.run(
        ["make", "-n", "run"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "pip install --quiet -e '.[testing]'" in planned
