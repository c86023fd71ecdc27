"""A tool's ``summary``: one sentence a reviewer reads before anything else, made from the call's
arguments (``'Post "{message}" to the public status page'``).

A summary names top-level arguments in braces (``{{`` and ``}}`` are braces themselves); nothing
else is evaluated, so a summary cannot reach into an argument's attributes the way
``str.format`` would. A text argument is put in as it is, anything else as compact JSON, each cut
to ``VALUE_MOST`` characters. A tool without a summary (an MCP server's, or one whose pack says
none) is summed up by the first sentence of its description and its arguments.
"""

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from kindgi.errors import DefinitionError

# How much of one argument a summary shows, and of the whole.
VALUE_MOST = 120
SUMMARY_MOST = 400
# How many arguments a summary made without a template names.
FALLBACK_ARGUMENTS = 3

_PLACE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")


def check_summary(template: Any, *, fields: Iterable[str], what: str) -> str:
    """``template`` if it is a summary whose every place names one of ``fields``; else why not."""
    if not isinstance(template, str) or not template.strip():
        raise DefinitionError(f"{what}: summary must be a sentence, e.g. 'Refund {{amountCents}} cents'")
    known = set(fields)
    for match in _PLACE.finditer(template):
        token = match.group(0)
        if token in ("{{", "}}"):
            continue
        name = match.group(1)
        if name is None:
            raise DefinitionError(f"{what}: summary {template!r} has a lone {token!r} (write {token * 2})")
        if not _NAME.match(name):
            raise DefinitionError(
                f"{what}: summary {template!r}: {{{name}}} is not an argument's name "
                "(a summary names top-level arguments only, e.g. {message})"
            )
        if name not in known:
            raise DefinitionError(
                f"{what}: summary {template!r} names {{{name}}}, which is not among the tool's "
                f"arguments ({', '.join(sorted(known)) or 'none'})"
            )
    return template.strip()


def render_summary(template: str, arguments: Any) -> str:
    """The summary of a call with ``arguments``; an argument the call left out reads ``(none)``."""
    given = arguments if isinstance(arguments, Mapping) else {}

    def place(match: re.Match) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        name = match.group(1)
        return _shown(given[name]) if name in given else "(none)"

    return cut_at_word(_PLACE.sub(place, without_controls(template)), SUMMARY_MOST)


def fallback_summary(description: str, arguments: Any) -> str:
    """A call summed up without a template: what the tool does (its description's first
    sentence) and its first few arguments."""
    # A description may come from an MCP server: shown to a reviewer as text, never as a
    # terminal's or a page's control.
    first = " ".join(
        without_controls(_SENTENCE_END.split((description or "").strip(), maxsplit=1)[0]).split()
    )
    first = (first or "Calls a tool").rstrip(".")
    given = arguments if isinstance(arguments, Mapping) else {}
    shown = [f"{name}: {_shown(value, most=60)}" for name, value in list(given.items())[:FALLBACK_ARGUMENTS]]
    if len(given) > FALLBACK_ARGUMENTS:
        shown.append(f"and {len(given) - FALLBACK_ARGUMENTS} more")
    return cut_at_word(f"{first} ({'; '.join(shown)})" if shown else first, SUMMARY_MOST)


def without_controls(text: str) -> str:
    """``text`` without control and format characters (a right-to-left override, a zero-width
    space): an argument must not rearrange the sentence it is shown in."""
    return "".join(char for char in text if unicodedata.category(char) not in ("Cc", "Cf") or char in "\t\n")


def _shown(value: Any, *, most: int = VALUE_MOST) -> str:
    if isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        text = ", ".join(value)  # a list of addresses, of names: as a person writes one
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return cut_at_word(" ".join(without_controls(text).split()), most)


def cut_at_word(text: str, most: int) -> str:
    """``text`` at most ``most`` characters long, cut at a word's end where one is near."""
    if len(text) <= most:
        return text
    cut = text[: most - 1]
    space = cut.rfind(" ")
    if space > most * 2 // 3:
        cut = cut[:space]
    return cut.rstrip() + "…"
