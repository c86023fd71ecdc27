"""Ids and versions of definitions: ``<pack>.<name>`` and semantic versions."""

import re

from kindgi.errors import DefinitionError

NAME_PATTERN = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_NAME = re.compile(rf"^{NAME_PATTERN}$")
_DEFINITION_ID = re.compile(rf"^(?P<pack>{NAME_PATTERN})\.(?P<name>{NAME_PATTERN})$")

# The official semver.org expression, without build metadata's effect on ordering.
_SEMVER = re.compile(
    r"^(?P<major>0|[1-9]\d*)\.(?P<minor>0|[1-9]\d*)\.(?P<patch>0|[1-9]\d*)"
    r"(?:-(?P<pre>(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)"
    r"(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+(?P<build>[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$"
)


def is_name(value: object) -> bool:
    """Whether ``value`` is a valid pack or node name: lowercase letters, digits and dashes."""
    return isinstance(value, str) and bool(_NAME.match(value))


def check_name(value: object, *, what: str) -> str:
    if not is_name(value):
        raise DefinitionError(
            f"{what}: {value!r} is not a valid name "
            "(lowercase letters, digits and dashes, starting and ending with a letter or digit)"
        )
    return value


def check_definition_id(value: object, *, what: str) -> str:
    """Return ``value`` if it is ``<pack>.<name>``, or raise naming ``what``."""
    if not isinstance(value, str) or not _DEFINITION_ID.match(value):
        raise DefinitionError(
            f"{what}: id {value!r} must be '<pack>.<name>' "
            "(lowercase letters, digits and dashes on each side of one dot, e.g. 'my-pack.lookup-order')"
        )
    return value


def pack_of(definition_id: str) -> str:
    return definition_id.split(".", 1)[0]


def check_semver(value: object, *, what: str) -> str:
    if not isinstance(value, str) or not _SEMVER.match(value):
        raise DefinitionError(
            f"{what}: version {value!r} is not a semantic version (MAJOR.MINOR.PATCH, e.g. '0.1.0')"
        )
    return value


def semver_key(version: str) -> tuple:
    """A sort key that orders versions as semver does (a pre-release sorts before its release)."""
    match = _SEMVER.match(version)
    if match is None:
        raise ValueError(f"not a semantic version: {version!r}")
    core = (int(match["major"]), int(match["minor"]), int(match["patch"]))
    pre = match["pre"]
    if pre is None:
        return (*core, 1, ())
    identifiers = tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in pre.split("."))
    return (*core, 0, identifiers)
