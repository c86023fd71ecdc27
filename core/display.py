"""Values as people read them, shared by the console and the admin: JSON shortened to fit a row,
effects in plain words."""

import json
from typing import Any

from kindgi.effects import effect_sentence

SHOWN_CHARACTERS = 20_000
TITLE_CHARACTERS = 2_000  # in a tooltip: enough to read, not a page's worth per row
SUMMARY_CHARACTERS = 160
SHORT_STRING = 40


def _shortened(value: Any) -> Any:
    if isinstance(value, str) and len(value) > SHORT_STRING:
        return value[: SHORT_STRING - 1] + "…"
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
