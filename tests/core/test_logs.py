"""Log lines about a run carry its id; production writes JSON lines."""

import io
import json
import logging

import pytest

from core.logs import JsonLineFormatter, RunIdFilter
from tests.kindgi_site.test_config import PRODUCTION, manage
from tests.pack_fixtures.probes import SCRIPT
from tests.runs.conftest import probe_packs  # noqa: F401  (the sample and probe packs)
from tests.runs.decide import decide
from tests.runs.helpers import answer, calls, reads, start

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def json_lines():
    """What the root logger writes while the test runs, as JSON lines, parsed."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonLineFormatter())
    handler.addFilter(RunIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield lambda: [json.loads(line) for line in stream.getvalue().splitlines()]
    finally:
        root.removeHandler(handler)


def test_every_line_about_a_run_names_it(json_lines):
    SCRIPT.replies += [
        calls(*reads("probe.read", "a", "b", "c")),
        calls(("w", "probe.write", {"label": "w"})),
    ]
    run = start("probe.gated")
    SCRIPT.replies += [answer()]
    decide(run, "w")
    lines = json_lines()
    about_the_run = [
        line for line in lines if str(run.pk) in line["message"] or line["logger"] == "tests.probes"
    ]
    # Executing twice (before and after the approval), finishing twice, the decision, and the
    # four tools' own lines: three of them from the threads that ran the reads in parallel.
    assert len(about_the_run) >= 9, lines
    assert all(line.get("run_id") == str(run.pk) for line in about_the_run), about_the_run
    assert sorted(line["message"] for line in about_the_run if line["logger"] == "tests.probes") == [
        "probe a: working",
        "probe b: working",
        "probe c: working",
        "probe w: working",
    ]
    assert {"time", "level", "logger", "message"} <= set(lines[0])


def test_lines_about_nothing_in_particular_have_no_run_id(json_lines):
    logging.getLogger("kindgi.test").warning("nothing about a run")
    (line,) = json_lines()
    assert "run_id" not in line
    assert (line["level"], line["logger"], line["message"]) == (
        "WARNING",
        "kindgi.test",
        "nothing about a run",
    )


def test_an_engine_failure_logs_its_traceback_with_the_run_id(json_lines, monkeypatch):
    from runs import executor

    def broken(*_arguments, **_options):
        raise RuntimeError("the engine is broken")

    monkeypatch.setattr(executor, "_engine_for", broken)
    run = start("probe.free")
    (failure,) = [line for line in json_lines() if line["level"] == "ERROR"]
    assert failure["run_id"] == str(run.pk)
    assert "RuntimeError: the engine is broken" in failure["exc_info"]


def test_production_logs_json_and_development_text():
    script = "import logging; logging.getLogger('kindgi.runs').warning('hello %s', 'there')"
    production = manage("shell", "-c", script, **PRODUCTION)
    assert production.returncode == 0, production.stderr
    line = json.loads(production.stderr.strip().splitlines()[-1])
    assert (line["level"], line["logger"], line["message"]) == ("WARNING", "kindgi.runs", "hello there")

    development = manage("shell", "-c", script, KINDGI_DEBUG="true")
    assert development.stderr.strip().splitlines()[-1] == "WARNING kindgi.runs hello there"


def test_a_bad_log_format_stops_start_up():
    result = manage("check", KINDGI_LOG_FORMAT="xml")
    assert result.returncode != 0
    assert "KINDGI_LOG_FORMAT must be one of text, json, not 'xml'" in result.stderr
