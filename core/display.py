"""Values as people read them, shared by the console and the admin: JSON shortened to fit a row,
effects in plain words."""

import difflib
import json
import re
from typing import Any

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from kindgi.effects import effect_sentence
from kindgi.summaries import cut_at_word

SHOWN_CHARACTERS = 20_000
TITLE_CHARACTERS = 2_000  # in a tooltip: enough to read, not a page's worth per row
SUMMARY_CHARACTERS = 160
SHORT_STRING = 60


def _shortened(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SHORT_STRING:
        return cut_at_word(value, SHORT_STRING)
    if isinstance(value, dict):
        return {key: _shortened(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_shortened(item) for item in value[:5]] + (["…"] if len(value) > 5 else [])
    return value


def json_summary(value: Any) -> str:
    """Compact JSON on one line, long strings and lists shortened: what a queue row can hold."""
    text = json.dumps(_shortened(value), ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= SUMMARY_CHARACTERS else text[: SUMMARY_CHARACTERS - 1] + "…"


def json_compact(value: Any) -> str:
    """The value as compact JSON on one line (for a tooltip, a diff's cell), cut at
    ``TITLE_CHARACTERS``."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= TITLE_CHARACTERS else text[: TITLE_CHARACTERS - 1] + "…"


def effect_words(effects) -> list[str]:
    """Stored effects (``{kind, resource}``) in plain words."""
    return [effect_sentence(effect["kind"], effect["resource"]) for effect in effects or ()]


_WORDS = re.compile(r"\s+|[^\s]+")
# Past this many word pairs the texts are compared whole (as console.js does): a word diff of two
# books is no help to anyone, and its cost grows with the product.
DIFF_WORK = 250_000


def word_diff(old: str, new: str) -> tuple[SafeString, SafeString]:
    """Two texts as a reviewer compares them: the old with the words taken out struck through,
    the new with the words put in marked; the words both keep, plain. Escaped."""
    old, new = old[:SHOWN_CHARACTERS], new[:SHOWN_CHARACTERS]
    before, after = _WORDS.findall(old), _WORDS.findall(new)
    if len(before) * len(after) > DIFF_WORK:
        return format_html("<del>{}</del>", old), format_html("<ins>{}</ins>", new)
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    kept_words = sum(
        1
        for operation, a0, a1, *_ in matcher.get_opcodes()
        if operation == "equal"
        for word in before[a0:a1]
        if not word.isspace()
    )
    if not kept_words:  # nothing in common but spaces: one text for another
        return format_html("<del>{}</del>", old), format_html("<ins>{}</ins>", new)
    left: list[tuple[str, str]] = []
    right: list[tuple[str, str]] = []
    for operation, a0, a1, b0, b1 in matcher.get_opcodes():
        taken, put = "".join(before[a0:a1]), "".join(after[b0:b1])
        if operation == "equal":
            left.append(("{}", taken))
            right.append(("{}", taken))
            continue
        if taken:
            left.append(("<del>{}</del>", taken))
        if put:
            right.append(("<ins>{}</ins>", put))
    return _joined(left), _joined(right)


def _joined(parts: list[tuple[str, str]]) -> SafeString:
    return format_html_join("", "{}", ((format_html(template, text),) for template, text in parts))
