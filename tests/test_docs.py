"""The README and docs/ say what is true: their JSON parses, their Python compiles (and the blocks
marked ```` ```python run ```` run and pass their asserts), their `kindgi` and `manage.py` commands
are ones that exist and take those flags, and their links lead to a file and a heading there."""

import ast
import json
import re
import shlex
from pathlib import Path

import pytest

from kindgi.cli.errors import CliError
from kindgi.cli.main import build_parser
from tests.live_server import ROOT

DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"(?<!!)\[[^\]\n]+\]\(([^)\s]+)\)")


def blocks(language: str) -> list:
    return list(_blocks(language))


def _blocks(language: str):
    for document in DOCUMENTS:
        text = document.read_text()
        for match in FENCE.finditer(text):
            words = match.group(1).split()
            if words and words[0] == language:
                line = text[: match.start()].count("\n") + 1
                yield pytest.param(match.group(2), words[1:], id=f"{document.name}:{line}")


def test_the_docs_are_there_and_the_readme_leads_to_each():
    names = {document.name for document in DOCUMENTS}
    assert names >= {
        "README.md",
        "quickstart.md",
        "concepts.md",
        "packs.md",
        "approvals.md",
        "connections-and-mail.md",
        "mcp.md",
        "operations.md",
        "api.md",
        "security.md",
    }
    readme = (ROOT / "README.md").read_text()
    for document in DOCUMENTS[1:]:
        assert f"](docs/{document.name})" in readme, f"the README does not lead to {document.name}"


@pytest.mark.parametrize(("code", "options"), blocks("json"))
def test_json_blocks_parse(code, options):
    json.loads(code)


@pytest.mark.parametrize(("code", "options"), blocks("python"))
def test_python_blocks_compile(code, options):
    compile(code, "<docs>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)  # a client's `async with`


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    ("code", "options"), [block for block in blocks("python") if "run" in block.values[1]]
)
def test_runnable_python_blocks_run(code, options):
    from tests.factories import member

    member("admin")  # the development admin the examples act as
    exec(compile(code, "<docs>", "exec"), {"__name__": "docs"})


def _commands(code: str):
    """Each command of a shell block, continuations joined, as words (comments and redirections
    left out; a line of several commands, joined by ``&&``, ``|``, ``;`` or ``&``, gives each)."""
    for line in code.replace("\\\n", " ").splitlines():
        line = re.sub(r"<([\w -]+)>", r"\1", line)  # a placeholder, <approval-id>, is a word
        lexer = shlex.shlex(line, posix=True, punctuation_chars="&|;<>")
        lexer.whitespace_split, lexer.commenters = True, "#"
        try:
            tokens = list(lexer)
        except ValueError:
            continue  # not shell, e.g. an example of output
        command: list[str] = []
        redirected = False
        for token in [*tokens, ";"]:
            if redirected:  # where output goes (> /dev/null), not an argument
                redirected = False
                continue
            if set(token) <= set("<>"):
                redirected = True
                if command and command[-1].isdigit():
                    command.pop()  # 2> names the stream
                continue
            if set(token) <= set("&|;"):
                while command and re.match(r"^[A-Z_][A-Z0-9_]*=", command[0]):
                    command = command[1:]  # VARIABLE=value before the command
                if command:
                    yield line, command
                command = []
            else:
                command.append(token)


@pytest.mark.parametrize(("code", "options"), [*blocks("sh"), *blocks("bash")])
def test_documented_commands_exist_with_the_flags_shown(code, options):
    from django.core.management import get_commands

    for line, words in _commands(code):
        if Path(words[0]).name == "kindgi":
            try:
                build_parser().parse_args(words[1:])
            except CliError as error:
                pytest.fail(f"{line!r}: {error.message}")
            except SystemExit:  # --help
                pass
        elif words[0].endswith("python") and words[1:2] == ["manage.py"]:
            assert words[2] in get_commands(), f"{line!r}: there is no command {words[2]!r}"


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(document: Path) -> set[str]:
    text = FENCE.sub("", document.read_text())
    return {_slug(line.lstrip("#")) for line in text.splitlines() if re.match(r"^#{1,6} ", line)}


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda document: document.name)
def test_links_lead_to_a_file_and_a_heading_there(document):
    text = FENCE.sub("", document.read_text())
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target):
            continue  # http:, https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        assert linked.exists(), f"{document.name}: {target!r} leads to no file"
        if anchor:
            assert anchor in _anchors(linked), f"{document.name}: {target!r} leads to no heading there"
