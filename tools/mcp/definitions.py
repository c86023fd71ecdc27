"""The MCP tools a tenant's run may call, as the engine's ``McpTool`` definitions, and the one
function that calls a server for them.

What a call returns reaches the model as data in every case: the server's structured content
(JSON) or its content blocks; an ``isError`` result, a server that is down, a connection that
breaks mid-call and a timeout each become error data with ``retryable`` set, and the run goes on.
"""

import logging
from collections.abc import Iterable
from typing import Any

from django.db.models import Q

from kindgi import ToolContext, ToolDefinition, ToolError
from kindgi.effects import Effect
from kindgi.mcp import MCP_SERVER_UNAVAILABLE, MCP_TIMEOUT, MCP_TOOL_VERSION, McpArguments, McpTool
from tools.mcp.client import POOL, McpRefused, McpTimeout, McpUnavailable
from tools.mcp.specs import ServerSpec, ServerSpecError, spec_from_config
from tools.models import McpServer, Tool
from tools.registry import get_registry

logger = logging.getLogger("kindgi.mcp")

MCP_TOOL_ERROR = "MCP_TOOL_ERROR"
MCP_REFUSED = "MCP_REFUSED"


def visible_to(tenant_id) -> Q:
    """The MCP servers whose tools ``tenant_id``'s runs may use: every tenant's, and its own."""
    return Q(tenant__isnull=True) | Q(tenant_id=tenant_id)


def mcp_tools_for(
    tenant_id, *, tool_ids: Iterable[str] = (), servers: Iterable[str] = ()
) -> dict[str, McpTool]:
    """The MCP tools, in service, that ``tenant_id`` may use among ``tool_ids`` and every tool of
    ``servers``: one query."""
    tool_ids, servers = list(tool_ids), list(servers)
    if not tool_ids and not servers:
        return {}
    rows = (
        Tool.objects.filter(
            Q(key__in=tool_ids) | Q(mcp_server__name__in=servers),
            origin=Tool.Origin.MCP,
            version=MCP_TOOL_VERSION,
            retired_at__isnull=True,
            mcp_server__enabled=True,
        )
        .filter(mcp_server__in=McpServer.objects.filter(visible_to(tenant_id)))
        .select_related("mcp_server")
    )
    return {row.key: definition_of(row) for row in rows}


def definition_of(row: Tool) -> McpTool:
    server = row.mcp_server
    return McpTool(
        id=row.key,
        version=row.version,
        description=row.description,
        func=_caller(server.config(), row.remote_name, confined=server.confined),
        server=server.name,
        remote_name=row.remote_name,
        schema=row.input_schema,
        claims=row.claims,
        effects=tuple(Effect.from_value(effect) for effect in row.effects),
        held=server.runnable_here or (HELD.format(server=server.name) if row.held_since is not None else ""),
    )


HELD = (
    "held: the MCP server {server} changed what it says of this tool (its description, input schema "
    "or annotations), or started to list it, and a tenant admin has not approved that yet"
)


def _caller(config: dict[str, Any], remote_name: str, *, confined: bool):
    def call(arguments: McpArguments, context: ToolContext) -> dict[str, Any]:
        try:
            spec: ServerSpec = spec_from_config(config, confined=confined)
            result = POOL.call_tool(spec, remote_name, arguments.model_dump(mode="json"))
        except McpTimeout as error:  # its message is the pool's own ("no answer within 30 s")
            raise ToolError(
                MCP_TIMEOUT,
                f"The MCP server {config['name']} did not answer in time: {error}.",
                retryable=True,
                recommended_action="Retry once; if it times out again, tell the user the tool is slow.",
            ) from None
        except (McpUnavailable, ServerSpecError) as error:
            # The model reads this as Kindgi's own word, so it says nothing the server could have
            # written (an HTTP reason phrase, say); the operator's log has the detail.
            logger.warning("MCP server %s: the call to %s failed: %s", config["name"], remote_name, error)
            raise ToolError(
                MCP_SERVER_UNAVAILABLE,
                f"The MCP server {config['name']} could not be reached, or the connection to it broke.",
                retryable=True,
                recommended_action="Retry later, or tell the user the tool is unavailable.",
            ) from None
        except McpRefused as error:
            raise ToolError(
                MCP_REFUSED,
                f"The MCP server {config['name']} refused the call: {error}",
                retryable=False,
                recommended_action="Do not retry this call; tell the user.",
            ) from None
        if result.is_error:
            raise ToolError(
                MCP_TOOL_ERROR,
                _text_of(result) or f"The tool {remote_name} reported an error.",
                retryable=True,
                recommended_action="Read the tool's message; correct the arguments or tell the user.",
            )
        return result_data(result)

    return call


def result_data(result) -> dict[str, Any]:
    """What the model receives of a result (an ``mcp_types.CallToolResult``): the structured
    content when the server gave some (JSON as it is), else the content blocks, text as text."""
    structured = result.structured_content
    if isinstance(structured, dict):
        return structured
    if structured is not None:
        return {"result": structured}
    return {"content": [_block(block) for block in result.content]}


def _block(block) -> Any:
    if block.type == "text":
        return block.text
    return block.model_dump(mode="json", by_alias=True, exclude_none=True)


def _text_of(result) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


def tool_for_tenant(tool_id: str, version: str | None, tenant_id) -> ToolDefinition | None:
    """A tool as ``tenant_id``'s runs see it: a pack's, or an MCP server's it may use."""
    tool = get_registry().tool(tool_id, version)
    if tool is not None:
        return tool
    return mcp_tools_for(tenant_id, tool_ids=[tool_id]).get(tool_id)
