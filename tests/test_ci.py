"""In CI a test that cannot run fails instead of skipping, whatever the runner sets CI to."""

import os
import subprocess
import sys

import pytest

from tests.ci import in_ci
from tests.live_server import ROOT

A_TEST_THAT_NEEDS_POSTGRES = """
import pytest

@pytest.mark.postgres
def test_on_postgres():
    pass
"""


@pytest.mark.parametrize("value", ["true", "True", "1", "yes", "github-actions"])
def test_any_ci_value_but_no_means_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    assert in_ci()


@pytest.mark.parametrize("value", ["", "0", "false", "FALSE", "False"])
def test_an_empty_ci_or_a_no_means_not_ci(monkeypatch, value):
    monkeypatch.setenv("CI", value)
    assert not in_ci()


def test_no_ci_at_all_means_not_ci(monkeypatch):
    monkeypatch.delenv("CI", raising=False)
    assert not in_ci()


def _pytest_on_sqlite(tmp_path, **environ) -> subprocess.CompletedProcess:
    """pytest over one `postgres` test, with the suite's guard and settings and no DATABASE_URL."""
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\nDJANGO_SETTINGS_MODULE = kindgi_site.settings\nmarkers = postgres: needs PostgreSQL\n"
    )
    (tmp_path / "conftest.py").write_text(
        "from tests.conftest import _postgres_tests_run_on_postgres  # noqa\n"
    )
    (tmp_path / "test_on_postgres.py").write_text(A_TEST_THAT_NEEDS_POSTGRES)
    environment = {name: value for name, value in os.environ.items() if name not in {"CI", "DATABASE_URL"}}
    environment |= {"PYTHONPATH": str(ROOT), **environ}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", str(tmp_path)],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_postgres_test_on_sqlite_skips_outside_ci(tmp_path):
    result = _pytest_on_sqlite(tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 skipped" in result.stdout
    assert "needs PostgreSQL: make test runs it with DATABASE_URL set" in result.stdout


def test_a_postgres_test_on_sqlite_fails_in_ci_when_ci_is_1(tmp_path):
    result = _pytest_on_sqlite(tmp_path, CI="1")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 error" in result.stdout  # the guard is a fixture: its failure is an error in setup
    assert "this test needs PostgreSQL, and in CI it must run" in result.stdout


@pytest.mark.parametrize(("value", "exit_status"), [("1", 0), ("true", 0), ("false", 1), ("", 1)])
def test_make_test_asks_the_same_question(value, exit_status):
    result = subprocess.run(
        [sys.executable, "-m", "tests.ci"], cwd=ROOT, env={"CI": value}, capture_output=True, timeout=30
    )
    assert result.returncode == exit_status, result.stderr
