"""Conditions on a tool call's arguments: ``<json-pointer> <operator> <JSON value>``.

    /amountCents > 10000
    /currency == "EUR"
    /notify != false

Operators: ``==  !=  >  >=  <  <=``. A pointer that finds nothing, or values
that cannot be compared, make the condition false: it does not hold.
"""

import json
import math
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_OPERATORS = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
# An array index as RFC 6901 writes it; str.isdigit() also takes "²", which int() refuses.
_INDEX = re.compile(r"0|[1-9][0-9]{0,17}")
_SYNTAX = re.compile(r"^\s*(?P<pointer>/\S*)\s*(?P<op>==|!=|>=|<=|>|<)\s*(?P<value>[^<>=!\s].*?)\s*$")
_MISSING = object()


class ConditionError(ValueError):
    pass


@dataclass(frozen=True)
class Condition:
    text: str
    pointer: tuple[str, ...]
    op: str
    value: Any

    def holds(self, arguments: Any) -> bool:
        found = _resolve(arguments, self.pointer)
        if found is _MISSING:
            return False
        ordering = self.op in {">", ">=", "<", "<="}
        numbers = (int, float)
        if ordering and not (
            (isinstance(found, numbers) and isinstance(self.value, numbers))
            or (isinstance(found, str) and isinstance(self.value, str))
        ):
            return False
        if isinstance(found, bool) != isinstance(self.value, bool) and ordering:
            return False
        try:
            return bool(_OPERATORS[self.op](found, self.value))
        except TypeError:
            return False


def _resolve(value: Any, pointer: tuple[str, ...]) -> Any:
    for segment in pointer:
        if isinstance(value, Mapping) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and _INDEX.fullmatch(segment) and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _MISSING
    return value


def _not_json(constant: str):
    # Python's reader takes NaN and Infinity, which JSON has not.
    raise json.JSONDecodeError(f"{constant} is not JSON", constant, 0)


def parse_condition(text: str) -> Condition:
    match = _SYNTAX.match(text or "")
    if match is None:
        raise ConditionError(
            f"{text!r} is not a condition; write '<json-pointer> <operator> <value>', "
            "e.g. '/amountCents > 10000' (operators: == != > >= < <=)"
        )
    try:
        value = json.loads(match["value"], parse_constant=_not_json)
    except json.JSONDecodeError:
        raise ConditionError(
            f'{match["value"]!r} in {text!r} is not a JSON value (quote strings: "EUR")'
        ) from None
    except ValueError:  # a number too long to read (Python reads at most 4300 digits)
        raise ConditionError(f"the number in {text[:60]!r}… is too long to compare with") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ConditionError(
            f"{match['value'][:60]!r} in {text[:60]!r} is too large a number to compare with"
        )
    segments = match["pointer"][1:].split("/") if match["pointer"] != "/" else []
    pointer = tuple(s.replace("~1", "/").replace("~0", "~") for s in segments)
    return Condition(text=text.strip(), pointer=pointer, op=match["op"], value=value)


def value_at(arguments: Any, pointer: str) -> Any:
    """The value at the JSON pointer ``pointer`` (``/amountCents``) in ``arguments``, or None
    where there is none."""
    segments = pointer[1:].split("/") if pointer not in ("", "/") else []
    found = _resolve(arguments, tuple(s.replace("~1", "/").replace("~0", "~") for s in segments))
    return None if found is _MISSING else found
