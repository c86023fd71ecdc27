"""docs/operations.md lists every environment variable the server reads, in a table generated
from the code (kindgi_site.settings_reference)."""

import ast

from kindgi_site import settings_reference


def test_every_variable_read_is_said_and_every_one_said_is_read():
    assert settings_reference.problems() == []


def test_the_documented_table_is_the_generated_one():
    assert settings_reference.documented() == settings_reference.table(), (
        "docs/operations.md's settings table is out of date: "
        "run .venv/bin/python -m kindgi_site.settings_reference --write"
    )


def test_a_new_variable_is_found_wherever_the_server_reads_it_and_must_be_said(monkeypatch):
    code = ast.parse(
        'X = ENV.integer("KINDGI_NEW_LIMIT", 3)\n'
        "if not DEBUG:\n"
        '    Y = ENV.boolean("KINDGI_ONLY_IN_PRODUCTION", True)\n'
        'key = os.environ.get("SOME_PROVIDER_KEY")\n'
        'other = os.environ["ANOTHER_ONE"]\n'
        "ignored = ENV.text(name)\n"
    )
    assert dict(settings_reference._reads_in(code)) == {
        "KINDGI_NEW_LIMIT": "`3`",
        "KINDGI_ONLY_IN_PRODUCTION": "`true`",
        "SOME_PROVIDER_KEY": "",
        "ANOTHER_ONE": "",
    }
    read = settings_reference.names_read()
    assert {"KINDGI_SSL_REDIRECT", "SECRET_KEY", "DATABASE_URL", "OPENAI_API_KEY"} <= read.keys()
    assert read["KINDGI_SSL_REDIRECT"].default == "`true`"

    said = dict(settings_reference.SAID)
    del said["KINDGI_SSL_REDIRECT"]
    said["KINDGI_GONE"] = "no longer read"
    monkeypatch.setattr(settings_reference, "SAID", said)
    assert settings_reference.problems() == [
        "KINDGI_SSL_REDIRECT (read in kindgi_site/settings.py) is not in SAID",
        "KINDGI_GONE is in SAID but nothing reads it",
    ]


def test_the_table_shows_a_default_the_code_gives_and_says_a_computed_one_in_words():
    rows = {line.split(" | ")[0].strip("| `"): line for line in settings_reference.table().splitlines()[2:]}
    assert rows["KINDGI_SWEEP_SECONDS"].startswith("| `KINDGI_SWEEP_SECONDS` | `5` | ")
    assert "| `text` in development, `json` in production |" in rows["KINDGI_LOG_FORMAT"]
    assert "| unset |" in rows["KINDGI_METRICS_TOKEN"]
