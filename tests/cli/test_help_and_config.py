import json
import os
import stat
import subprocess
import sys

import pytest

from kindgi.cli import main
from kindgi.cli.config import resolve, save
from kindgi.cli.main import build_parser


def all_commands(parser, prefix=()):
    for action in parser._subparsers._group_actions if parser._subparsers else []:
        for name, child in action.choices.items():
            if child._subparsers:
                yield from all_commands(child, (*prefix, name))
            else:
                yield (*prefix, name)


COMMANDS = list(all_commands(build_parser()))


def test_the_design_commands_all_exist():
    expected = {
        ("dev",),
        ("runs", "start"),
        ("runs", "get"),
        ("runs", "list"),
        ("runs", "journal"),
        ("runs", "watch"),
        ("runs", "cancel"),
        ("approvals", "list"),
        ("approvals", "get"),
        ("approvals", "complete"),
        ("reviewers", "register"),
        ("tools", "list"),
        ("agents", "list"),
        ("flows", "list"),
    }
    assert expected <= set(COMMANDS)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help_with_an_example(command, capsys):
    with pytest.raises(SystemExit) as exit:
        main([*command, "--help"])
    assert exit.value.code == 0
    out = capsys.readouterr().out
    example = out.split("example:\n", 1)[1]
    assert f"kindgi {command[0]}" in example


def test_the_config_file_is_private_and_flags_beat_the_environment_beat_the_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KINDGI_CONFIG", str(tmp_path / "kindgi" / "config.json"))
    monkeypatch.delenv("KINDGI_URL", raising=False)
    monkeypatch.delenv("KINDGI_TOKEN", raising=False)
    path = save("http://127.0.0.1:8000", "kgi_saved_token")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text()) == {"url": "http://127.0.0.1:8000", "token": "kgi_saved_token"}
    assert resolve(None, None).token == "kgi_saved_token"
    monkeypatch.setenv("KINDGI_TOKEN", "kgi_env_token")
    monkeypatch.setenv("KINDGI_URL", "http://example.invalid:1/")
    assert resolve(None, None) == type(resolve(None, None))(
        url="http://example.invalid:1", token="kgi_env_token"
    )
    assert resolve("http://flag:2", "kgi_flag").token == "kgi_flag"


def test_the_console_script_imports_no_django():
    code = (
        "import sys; from kindgi.cli import main; "
        "assert not [m for m in sys.modules if m == 'django' or m.startswith('django.')], 'django imported'; "
        "sys.exit(main(['--help']))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Exit codes: 0 success, 1 an API error or a failed run, 2 a usage error." in result.stdout


def test_a_group_without_an_action_is_a_usage_error(capsys):
    assert main(["runs"]) == 2
    assert "kindgi runs: the following arguments are required: ACTION" in capsys.readouterr().err


def test_a_worker_needs_a_queue(monkeypatch, capsys):
    monkeypatch.delenv("KINDGI_TASKS", raising=False)
    assert main(["worker"]) == 2
    assert "set KINDGI_TASKS to db (and DATABASE_URL), or to rq or celery" in capsys.readouterr().err
    monkeypatch.setenv("KINDGI_TASKS", "immediate")
    assert main(["worker"]) == 2


def test_a_worker_of_a_queue_in_redis_runs_that_librarys_worker(monkeypatch, capsys):
    from kindgi.cli import dev

    executed = []
    monkeypatch.setenv("KINDGI_TASKS", "")  # unset, and put back as it was after the test
    monkeypatch.setenv("REDIS_URL", "")
    monkeypatch.setattr(dev, "_exec", lambda *arguments: executed.append(arguments))
    assert main(["worker", "--backend", "rq"]) == 2
    assert "KINDGI_TASKS=rq queues runs in Redis: set REDIS_URL" in capsys.readouterr().err
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:6379/0")
    assert main(["worker", "--backend", "rq"]) == 0
    assert executed == [("-m", "django", "run_queue_worker", "--queue-name", "default")]
    assert os.environ["KINDGI_TASKS"] == "rq"  # what the worker's settings read
    # The web processes queue runs where KINDGI_TASKS says: a worker of another queue is refused.
    monkeypatch.setenv("KINDGI_TASKS", "db")
    assert main(["worker", "--backend", "celery"]) == 2
    assert "--backend celery but KINDGI_TASKS=db" in capsys.readouterr().err
    assert len(executed) == 1


def test_the_sweeper_runs_the_sweeps_for_ever(monkeypatch):
    from kindgi.cli import dev

    executed = []
    monkeypatch.setattr(dev, "_exec", lambda *arguments: executed.append(arguments))
    assert main(["sweeper"]) == 0
    assert executed == [("-m", "django", "run_sweeps", "--every", "0")]


def test_a_worker_runs_the_database_worker_with_its_metrics_port(monkeypatch):
    from kindgi.cli import dev

    executed = []
    monkeypatch.setenv("KINDGI_TASKS", "db")
    monkeypatch.setattr(dev, "_exec", lambda *arguments: executed.append(arguments))
    assert main(["worker", "--queue", "runs", "--metrics-port", "9101"]) == 0
    assert executed == [
        ("-m", "django", "run_worker", "--no-reload", "--queue-name", "runs", "--metrics-port", "9101")
    ]
