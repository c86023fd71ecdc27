"""Why a gate asks, in words a reviewer reads: the gate's ``reason`` is written for the record
(``override always_ask (agent code)``); this says it as a sentence ("this agent's code asks
before every call of this tool"). The record's reason stays where it was, for those who want it."""

import re

_OVERRIDE = re.compile(r"override (?P<gate>\w+)(?: when (?P<when>.+))? \((?P<source>agent code|admin)\)\Z")
_RULE = re.compile(r'rule "(?P<name>.+)" \((?P<gate>\w+)(?:, (?P<after>.+))?\)(?P<rest>.*)\Z')
_RULE_GATES = {
    "always_ask": "asks every time",
    "ask_once": "asks once in a conversation",
    "never_ask": "lets it run within its budget",
    "deny": "refuses it",
}
_DEFAULTS = {
    "default: first use of a tool that is not read-only": (
        "it is this conversation's first call of a tool that changes things"
    ),
}


def why_it_asks(reason: str) -> str:
    """``reason`` (a gate's, its parts joined by "; ") as one sentence, each part in words."""
    parts: list[str] = []
    for part in (reason or "").split("; "):
        if parts and part.startswith("this call "):
            parts[-1] += f", and this call adds {part.removeprefix('this call ')}"
        else:
            parts.append(_in_words(part.strip()))
    sentence = "; ".join(part for part in parts if part)
    return sentence[:1].upper() + sentence[1:] if sentence else ""


def _in_words(part: str) -> str:
    if part in _DEFAULTS:
        return _DEFAULTS[part]
    if match := _OVERRIDE.match(part):
        who = "this agent's code" if match["source"] == "agent code" else "an admin's setting for this agent"
        if match["gate"] != "always_ask":
            return f"{who} says {match['gate'].replace('_', ' ')}"
        if match["when"]:
            return f"{who} asks when {match['when']}"
        return f"{who} asks before every call of this tool"
    if match := _RULE.match(part):
        does = _RULE_GATES.get(match["gate"], match["gate"].replace("_", " "))
        after = f", {match['after']}" if match["after"] else ""
        rest = match["rest"]
        if rest.startswith(": "):
            return f"rule “{match['name']}”: {rest[2:]}"
        return f"rule “{match['name']}” {does}{after}{rest}"
    if part.startswith("over budget: "):
        return f"it would go over its budget: {part.removeprefix('over budget: ')}"
    if part.startswith("budget: "):
        return f"within its budget: {part.removeprefix('budget: ')}"
    return part
