"""Tools that come from an MCP server: what the catalog knows of one, as the engine sees it.

An MCP tool is a ``ToolDefinition`` like any other, so every call to one goes through the same
call policy. What differs: its input is checked against the server's JSON schema (there is no
pydantic model of it), it is never read-only whatever its annotations claim, and what it
returns is outside data.
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from kindgi.tools import ToolDefinition, ToolOrigin

# MCP tools have no versions of their own; the catalog lists each one at this version.
MCP_TOOL_VERSION = "1.0.0"

# What Kindgi says of an MCP call that did not reach its server or got no answer: its own words,
# never the server's (the model reads them as Kindgi's, not as outside data).
MCP_SERVER_UNAVAILABLE = "MCP_SERVER_UNAVAILABLE"
MCP_TIMEOUT = "MCP_TIMEOUT"


class McpArguments(BaseModel):
    """The arguments of an MCP call once the server's schema accepted them, kept as they came."""

    model_config = ConfigDict(extra="allow")


class McpResult(BaseModel):
    """What an MCP call returned: the server's structured content, or its content blocks."""

    model_config = ConfigDict(extra="allow")


def catalog_name(remote_name: str) -> str:
    """The name part of a tool's catalog id: the server's name lowercased, ``_`` and spaces as
    ``-``, anything else outside ``[a-z0-9-]`` dropped."""
    lowered = remote_name.strip().lower().replace("_", "-").replace(" ", "-").replace(".", "-")
    kept = "".join(c for c in lowered if c.isascii() and (c.isalnum() or c == "-"))
    while "--" in kept:
        kept = kept.replace("--", "-")
    return kept.strip("-")


@dataclass(frozen=True, kw_only=True)
class McpTool(ToolDefinition):
    """A tool one MCP server lists. ``func`` calls the server; ``remote_name`` is the name it is
    called by there; ``claims`` are the server's annotations, shown as its claims, never trusted."""

    server: str
    remote_name: str
    schema: Mapping[str, Any] = field(default_factory=dict)
    claims: Mapping[str, Any] = field(default_factory=dict)
    func: Callable[..., Any] = field(repr=False, compare=False)
    input_model: type[BaseModel] = McpArguments
    output_model: type[BaseModel] = McpResult
    takes_context: bool = True
    mutating: bool = True
    result_is_outside_data: bool = True
    origin: ToolOrigin = ToolOrigin.MCP
    # Why it may not be called now, if it may not: its server changed what it says of it (or
    # started to list it) and no one has approved that yet.
    held: str = ""

    @property
    def input_schema(self) -> dict[str, Any]:
        return dict(self.schema)

    @property
    def output_schema(self) -> dict[str, Any]:
        return {"type": "object"}
