"""Agents that use MCP servers' tools, for the MCP tests: they answer from the probes' ``SCRIPT``.

``notes`` and ``private-notes`` are servers the tests configure (``tests/mcp_servers/notes.py``
over stdio and over streamable HTTP); a tenant's own server is one the admin made for it.
"""

from pydantic import BaseModel

from kindgi import define_agent, define_flow, define_pack, from_input, from_node, tool_step
from tests.pack_fixtures.probes import model

# Gated: with hitl.tools on, a tool that is not read-only asks on its first use, and no MCP tool
# is read-only, whatever its annotations say.
clerk = define_agent(
    id="mcp-probe.clerk",
    version="1.0.0",
    name="Notes clerk",
    instructions="Keep the notes.",
    model=model,
    mcp_servers=["notes"],
    conversation_policy={"hitl": {"tools": {}}},
)

# Ungated, naming one tool by id.
reader = define_agent(
    id="mcp-probe.reader",
    version="1.0.0",
    name="Notes reader",
    instructions="Read notes.",
    model=model,
    tools=["notes.read-note", "notes.slow-note", "notes.crash-server", "notes.write-note"],
)

# A server only some tenants have.
private = define_agent(
    id="mcp-probe.private",
    version="1.0.0",
    name="Private notes reader",
    instructions="Read the tenant's own notes.",
    model=model,
    mcp_servers=["private-notes"],
)


class NoteName(BaseModel):
    name: str


# A flow's tool step may call an MCP tool by id too.
read_note = define_flow(
    id="mcp-probe.read-note",
    version="1.0.0",
    input=NoteName,
    nodes=[tool_step("read", "notes.read-note", input={"name": from_input("name")})],
    output={"text": from_node("read", "text")},
)

pack = define_pack(name="mcp-probe", agents=[clerk, reader, private], flows=[read_note])
