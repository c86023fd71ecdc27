"""What JSON may hold: how deep it nests (checked without recursion, so hostile input cannot
exhaust the stack), and no NUL character, which PostgreSQL cannot store in text or JSON."""

from typing import Any


def nesting_depth_exceeds(value: Any, limit: int) -> bool:
    """Whether arrays and objects in ``value`` nest more than ``limit`` levels deep."""
    stack = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children = current.values()
        elif isinstance(current, list | tuple):
            children = current
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def holds_nul(value: Any) -> bool:
    """Whether any string or key in ``value`` holds the NUL character (U+0000)."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if "\x00" in current:
                return True
        elif isinstance(current, dict):
            stack.extend(current.keys())
            stack.extend(current.values())
        elif isinstance(current, list | tuple):
            stack.extend(current)
    return False


def without_nul(value: Any) -> Any:
    """``value`` with every NUL character in its strings and keys replaced by U+FFFD, so that it
    can be stored; ``value`` itself when it holds none."""
    if not holds_nul(value):
        return value
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, dict):
        return {without_nul(key): without_nul(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [without_nul(item) for item in value]
    return value
