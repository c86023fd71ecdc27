"""`kindgi test PATH`: a pack's own tests, with the pytest that came with Kindgi.

Run as ``kindgi dev --pack`` imports the pack (by a link to its folder, not by its parent, whose
other folders could shadow Kindgi's packages), with pytest's importlib mode (which adds no folder
to the path either), and away from any project's pytest settings: the pack's tests need none, and
a site's (its Django settings, its test paths) would change what they mean.
"""

import importlib.util
import os
import subprocess
import sys
from collections.abc import Sequence

from kindgi.cli import processes
from kindgi.cli.dev import importable, pack_folder
from kindgi.cli.errors import OK, USAGE_ERROR, CliError


def run_pack_tests(path: str, pytest_arguments: Sequence[str] = ()) -> int:
    folder = pack_folder(path)
    if importlib.util.find_spec("pytest") is None:
        raise CliError(
            "pytest is not installed beside Kindgi: `make run` (or `make install`) installs it, "
            "or pip install 'kindgi[testing]'",
            USAGE_ERROR,
        )
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(importable([folder])), os.environ.get("PYTHONPATH")]))
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    command = [
        sys.executable,
        "-P",  # nor the folder it is started from
        "-m",
        "pytest",
        str(folder),
        "--rootdir",
        str(folder),
        "-c",
        os.devnull,  # no project's pytest settings: the pack's own conftest.py is all it reads
        "-p",
        "no:cacheprovider",
        "-p",
        "no:django",
        "--import-mode=importlib",
        *pytest_arguments,
    ]
    status = subprocess.run(command, cwd=folder.parent, env=env).returncode
    # pytest's own code (1: a test failed, 5: none was found…), which scripts and CI know.
    return OK if status == 0 else processes.exit_status(status)
