"""The kernel reads no settings and imports nothing of Django: a process that never configured
Django imports every module of ``runs.engine`` and drives a pack through ``kindgi.testing``
(a gated write approved, a rejection, a flow), and Django is still not loaded at the end. The
driver hands the kernel the site's limits as values, and those it assumes alone are the
settings' defaults."""

import json
import os
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

from core.conf import DEFAULTS
from kindgi.cli.init import create_pack
from runs.engine.limits import DEFAULT_LIMITS, Limits
from runs.policy_context import LIMIT_SETTINGS, engine_limits

ROOT = Path(__file__).resolve().parents[3]

DRIVE_A_PACK = """
import importlib, json, pkgutil, sys
import runs.engine
for module in pkgutil.iter_modules(runs.engine.__path__):
    importlib.import_module("runs.engine." + module.name)
from kindgi.testing import PackTester
from kindgi_alone import pack
tester = PackTester(pack)
approved = tester.run_agent("kindgi-alone.assistant", "write todo: buy milk")
waited = approved.status
approved.approve()
rejected = tester.run_agent("kindgi-alone.assistant", "write todo: buy bread").reject("not today")
print(json.dumps({
    "waited": waited,
    "approved": approved.status,
    "rejected": rejected.reply,
    "loaded": sorted(m for m in sys.modules if m == "django" or m.startswith(("django.", "core.conf"))),
}))
"""


def test_the_kernel_and_the_pack_tester_run_with_no_django_at_all(tmp_path):
    create_pack("kindgi-alone", directory=tmp_path)
    env = {name: value for name, value in os.environ.items() if name != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    done = subprocess.run(
        [sys.executable, "-c", DRIVE_A_PACK],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == {
        "waited": "waiting",
        "approved": "completed",
        "rejected": "Nothing was written: a reviewer said no (not today).",
        "loaded": [],
    }


def test_the_kernels_own_limits_are_the_sites_defaults():
    assert set(LIMIT_SETTINGS) == set(asdict(DEFAULT_LIMITS))
    assert Limits(**{field: DEFAULTS[name] for field, name in LIMIT_SETTINGS.items()}) == DEFAULT_LIMITS


def test_the_driver_hands_the_kernel_the_limits_the_site_sets(settings):
    settings.KINDGI_MAX_MODEL_STEPS = 3
    settings.KINDGI_MAX_JSON_DEPTH = 4
    limits = engine_limits()
    assert (limits.max_model_steps, limits.max_json_depth) == (3, 4)
