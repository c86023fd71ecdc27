"""`make run` makes its virtualenv with the first Python >= 3.12 it finds, or says why it can't."""

import shutil
import stat
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MAKE = shutil.which("make")
MKDIR = shutil.which("mkdir")


def fake_python(bin_dir: Path, name: str, *, new_enough: bool) -> None:
    """An interpreter that answers the version check, and makes a venv when asked."""
    script = bin_dir / name
    script.write_text(
        "#!/bin/sh\n"
        f'if [ "$1" = "-c" ]; then exit {0 if new_enough else 1}; fi\n'
        f'if [ "$1" = "--version" ]; then echo "Python from {name}"; exit 0; fi\n'
        f'if [ "$1" = "-m" ] && [ "$2" = "venv" ]; then {MKDIR} -p "$3/bin" && : > "$3/bin/python"; '
        f'echo {name} > "$3/made-by"; exit 0; fi\n'
        "exit 2\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def make_venv(tmp_path: Path) -> subprocess.CompletedProcess:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    return subprocess.run(
        [MAKE, ".venv/bin/python"],
        cwd=tmp_path,
        env={"PATH": str(tmp_path / "bin")},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_without_a_new_enough_python_it_says_so(tmp_path):
    (tmp_path / "bin").mkdir()
    fake_python(tmp_path / "bin", "python3", new_enough=False)
    result = make_venv(tmp_path)
    assert result.returncode != 0
    assert "Kindgi needs Python 3.12 or newer, and none was found on PATH" in result.stderr
    assert not (tmp_path / ".venv").exists()


def test_it_uses_the_first_new_enough_python(tmp_path):
    (tmp_path / "bin").mkdir()
    fake_python(tmp_path / "bin", "python3.12", new_enough=False)
    fake_python(tmp_path / "bin", "python3", new_enough=True)
    result = make_venv(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Creating .venv with Python from python3" in result.stdout
    assert (tmp_path / ".venv" / "made-by").read_text().strip() == "python3"


def test_postgres_reachable_says_why_not(tmp_path):
    import sys

    result = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "postgres-reachable")],
        env={"DATABASE_URL": "postgresql://postgres@127.0.0.1:1/test", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 1
    assert result.stderr.startswith("PostgreSQL at postgresql://postgres@127.0.0.1:1/test is not reachable:")
