"""Packs: the definitions one Python package contributes under one prefix."""

import importlib
from collections.abc import Iterable
from dataclasses import dataclass, replace

from kindgi.agents import AgentDefinition
from kindgi.errors import DefinitionError
from kindgi.flows import FlowDefinition
from kindgi.naming import check_name
from kindgi.tools import ToolDefinition


@dataclass(frozen=True, kw_only=True)
class Pack:
    name: str
    tools: tuple[ToolDefinition, ...] = ()
    agents: tuple[AgentDefinition, ...] = ()
    flows: tuple[FlowDefinition, ...] = ()
    module: str = ""


def define_pack(
    *,
    name: str,
    tools: Iterable[ToolDefinition] = (),
    agents: Iterable[AgentDefinition] = (),
    flows: Iterable[FlowDefinition] = (),
) -> Pack:
    """Declare what a pack contributes. Its package exposes the result as ``pack``."""
    check_name(name, what="pack")
    pack = Pack(name=name, tools=tuple(tools), agents=tuple(agents), flows=tuple(flows))
    for field_name, expected, items in (
        ("tools", ToolDefinition, pack.tools),
        ("agents", AgentDefinition, pack.agents),
        ("flows", FlowDefinition, pack.flows),
    ):
        for index, item in enumerate(items):
            if not isinstance(item, expected):
                raise DefinitionError(
                    f"pack {name!r}: {field_name}[{index}]: {item!r} is not a {expected.__name__}"
                )
    return pack


def import_pack(module_path: str) -> Pack:
    """Import the pack a ``KINDGI_PACKS`` entry names; its package must expose ``pack``."""
    try:
        module = importlib.import_module(module_path)
    except DefinitionError as error:
        raise DefinitionError(f"pack module {module_path!r}: {error}") from error
    except ImportError as error:
        raise DefinitionError(f"pack module {module_path!r} cannot be imported: {error}") from error
    pack = getattr(module, "pack", None)
    if not isinstance(pack, Pack):
        raise DefinitionError(f"pack module {module_path!r} does not define `pack = define_pack(...)`")
    return replace(pack, module=module_path)
