"""How the console shows what reviewers judge: JSON as JSON, effects in plain words, edits as diffs.

Everything shown is escaped (``format_html`` and ``escape``); a value too large to show whole is
cut at ``SHOWN_CHARACTERS`` and says how much is left out, so a huge input never makes a huge page.
"""

import json
from typing import Any

from django import template
from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe

from core import display
from runs import timeline

register = template.Library()

SHOWN_CHARACTERS = display.SHOWN_CHARACTERS
FOLDED_LINES = 30


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@register.simple_tag
def json_block(value: Any, element_id: str = "", css: str = "") -> SafeString:
    """JSON, pretty, in a <pre>; folded in a <details> past ``FOLDED_LINES``; cut past
    ``SHOWN_CHARACTERS``, saying how much is not shown."""
    text = pretty(value)
    shown, cut = text[:SHOWN_CHARACTERS], len(text) - SHOWN_CHARACTERS
    attributes = format_html(' id="{}"', element_id) if element_id else ""
    classes = f"json {css}".strip()
    block = format_html('<pre class="{}"{}>{}</pre>', classes, attributes, shown)
    if cut > 0:
        block += format_html(
            '<p class="muted cut">{} more characters not shown ({} KB in all).</p>',
            f"{cut:,}",
            len(text) // 1024,
        )
    lines = text.count("\n") + 1
    if lines > FOLDED_LINES:
        return format_html(
            '<details class="json-fold"><summary>{} lines of JSON</summary>{}</details>', lines, block
        )
    return block


@register.simple_tag
def text_block(text: Any) -> SafeString:
    """A message's text in a <p>, cut past ``SHOWN_CHARACTERS``, saying how much is not shown."""
    text = str(text)
    cut = len(text) - SHOWN_CHARACTERS
    block = format_html("<p>{}</p>", text[:SHOWN_CHARACTERS])
    if cut > 0:
        block += format_html('<p class="muted cut">{} more characters not shown.</p>', f"{cut:,}")
    return block


register.filter("json_summary", display.json_summary)
register.filter("json_compact", display.json_compact)
register.filter("effect_words", display.effect_words)


@register.simple_tag
def arguments_diff(before: Any, after: Any) -> SafeString:
    """What an edit changed, field by field: removed, added, changed (old → new)."""
    before = before if isinstance(before, dict) else {}
    after = after if isinstance(after, dict) else {}
    rows = []
    for key in [*before, *(k for k in after if k not in before)]:
        old, new = before.get(key, _MISSING), after.get(key, _MISSING)
        if old == new:
            continue
        change = "added" if old is _MISSING else "removed" if new is _MISSING else "changed"
        if isinstance(old, str) and isinstance(new, str):
            shown_old, shown_new = display.word_diff(old, new)
        else:
            shown_old = format_html("<del>{}</del>", display.json_compact(old)) if old is not _MISSING else ""
            shown_new = format_html("<ins>{}</ins>", display.json_compact(new)) if new is not _MISSING else ""
        rows.append(
            format_html(
                '<tr class="diff-{}"><th scope="row"><code>{}</code></th><td>{}</td><td>{}</td></tr>',
                change,
                key,
                shown_old,
                shown_new,
            )
        )
    if not rows:
        return mark_safe('<p class="muted">The arguments are unchanged.</p>')
    head = (
        '<table class="diff"><thead><tr><th>Field</th><th>Asked for</th><th>Approved</th></tr></thead><tbody>'
    )
    return mark_safe(head + "".join(rows) + "</tbody></table>")


_MISSING = object()


@register.filter
def decision_word(decision: str) -> str:
    """``approve`` → ``approved``, ``reject`` → ``rejected``, ``request_changes`` → ``changes requested``."""
    return timeline.DECIDED.get(decision, escape(decision))


@register.filter
def duration_words(seconds: float) -> str:
    """``90.0`` → ``1.5 min``: a span of time as the timeline's axis writes it."""
    return timeline.format_duration(seconds)


@register.filter
def took_words(span) -> str:
    """A timedelta as the timeline writes durations; none, a dash."""
    return "—" if span is None else timeline.format_duration(span.total_seconds())


@register.filter
def percent(fraction: float | None) -> str:
    return "—" if fraction is None else f"{fraction:.0%}"
