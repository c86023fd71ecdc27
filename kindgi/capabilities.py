"""What a model can do, and what an agent needs of its model.

An agent declares what it needs as seed 004 shows it: ``capabilities=[{"needs": [{"feature":
"tool-use"}]}]``. Features come from one known list. A scripted model declares its own; a
provider's model string is looked up in ``PROVIDER_FEATURES``. An agent whose model lacks a
feature it needs does not load; an agent on the site's default model (known only at run time)
fails before its model is asked.
"""

import re
from collections.abc import Iterable, Mapping
from typing import Any

from kindgi.errors import DefinitionError

FEATURES = (
    "tool-use",  # calls tools
    "structured-output",  # answers in a JSON schema it is given
    "vision",  # reads images
    "document-input",  # reads documents (PDF) as they are
    "audio-input",  # hears audio
    "reasoning",  # thinks before it answers, as a feature of the model
)
FEATURES_TEXT = ", ".join(FEATURES)

_TOOLS_AND_SCHEMAS = frozenset({"tool-use", "structured-output"})
_SEEING = _TOOLS_AND_SCHEMAS | {"vision"}

# Provider, then the first pattern the model's name matches. What is not here is known to use
# tools only when its provider's protocol carries them.
PROVIDER_FEATURES: dict[str, tuple[tuple[str, frozenset[str]], ...]] = {
    "openai": (
        (r"^(o1|o3|o4)", _SEEING | {"reasoning"}),
        (r"^gpt-5", _SEEING | {"reasoning", "document-input"}),
        (r"^gpt-4o-audio", _TOOLS_AND_SCHEMAS | {"audio-input"}),
        (r"^(gpt-4o|gpt-4\.1)", _SEEING | {"document-input"}),
        (r"^gpt-", _TOOLS_AND_SCHEMAS),
    ),
    "anthropic": (
        (r"^claude-(3-7|sonnet-4|opus-4|haiku-4)", _SEEING | {"document-input", "reasoning"}),
        (r"^claude-", _SEEING | {"document-input"}),
    ),
    # A server speaking the chat-completions protocol: tools and JSON schemas travel in it; what
    # the model behind it sees or hears cannot be known from here.
    "openai-compatible": ((r"", _TOOLS_AND_SCHEMAS),),
    "google-gla": ((r"^gemini-", _SEEING | {"document-input", "audio-input"}),),
    "google-vertex": ((r"^gemini-", _SEEING | {"document-input", "audio-input"}),),
    "groq": ((r"", _TOOLS_AND_SCHEMAS),),
    "mistral": ((r"^pixtral", _SEEING), (r"", _TOOLS_AND_SCHEMAS)),
}


def check_features(features: Iterable[Any], *, what: str) -> frozenset[str]:
    """The features named, each one known; raises ``DefinitionError`` naming any that is not."""
    if isinstance(features, str):
        raise DefinitionError(f"{what}: must be a list of features, not a string")
    checked = set()
    for feature in features:
        if feature not in FEATURES:
            raise DefinitionError(f"{what}: {feature!r} is not a known feature (known: {FEATURES_TEXT})")
        checked.add(feature)
    return frozenset(checked)


def parse_capabilities(capabilities: Iterable[Any], *, what: str) -> tuple[frozenset[str], tuple[dict, ...]]:
    """The features an agent needs, and its capabilities as declared (to show and store)."""
    if isinstance(capabilities, (str, Mapping)):
        raise DefinitionError(f"{what}: capabilities must be a list such as [{{'needs': [...]}}]")
    needed: set[str] = set()
    declared = []
    for index, capability in enumerate(capabilities):
        where = f"{what}: capabilities[{index}]"
        if not isinstance(capability, Mapping):
            raise DefinitionError(
                f"{where}: must be a mapping such as {{'needs': [{{'feature': 'tool-use'}}]}}"
            )
        unknown = sorted(set(capability) - {"needs"})
        if unknown:
            raise DefinitionError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))} (allowed: needs)")
        needs = capability.get("needs", [])
        if isinstance(needs, (str, Mapping)) or not isinstance(needs, Iterable):
            raise DefinitionError(f"{where}.needs: must be a list of {{'feature': …}}")
        needs = list(needs)
        for position, need in enumerate(needs):
            place = f"{where}.needs[{position}]"
            if not isinstance(need, Mapping) or set(need) != {"feature"}:
                raise DefinitionError(f"{place}: must be {{'feature': <one of: {FEATURES_TEXT}>}}")
            needed |= check_features([need["feature"]], what=place)
        declared.append({"needs": [{"feature": need["feature"]} for need in needs]})
    return frozenset(needed), tuple(declared)


def model_features(model_string: str) -> frozenset[str]:
    """What a provider's model can do, as far as Kindgi knows it (``provider:model``)."""
    provider, _, name = model_string.partition(":")
    if provider == "openai-compatible":
        name = name.partition("@")[0]
    for pattern, features in PROVIDER_FEATURES.get(provider, ()):
        if re.match(pattern, name):
            return features
    return frozenset({"tool-use"})


def missing_features(needed: Iterable[str], model_name: str, has: Iterable[str]) -> str | None:
    """The message that names what ``model_name`` lacks of ``needed``, or None when it has all."""
    lacking = sorted(set(needed) - set(has))
    if not lacking:
        return None
    names = ", ".join(repr(feature) for feature in lacking)
    return f"needs the feature(s) {names}, which its model {model_name} does not have"
