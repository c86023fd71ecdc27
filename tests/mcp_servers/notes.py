"""A real MCP server for Kindgi's tests, written with the ``mcp`` SDK's ``MCPServer``.

``python notes.py`` serves it over stdio; ``python notes.py --http PORT`` over streamable HTTP
on 127.0.0.1, refusing requests without ``Authorization: Bearer $NOTES_TOKEN`` when that is set.
Each call of ``write_note`` appends a line to ``$NOTES_LOG``, so a test can count what ran.
"""

import os
import sys
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel

server = MCPServer("notes", version="1.2.0")
NOTES = {"welcome": "Hello from the notes server."}


class Note(BaseModel):
    name: str
    text: str


# A server that changes what it says of a tool (a test sets these): its description, and a tool
# it starts to list.
READ_NOTE = os.environ.get("NOTES_READ_DESCRIPTION") or "Read one note by its name."


@server.tool(description=READ_NOTE, annotations=ToolAnnotations(title="Read a note", read_only_hint=True))
def read_note(name: str) -> Note:
    if name not in NOTES:
        raise ToolError(f"no note named {name!r}")
    return Note(name=name, text=NOTES[name])


@server.tool(annotations=ToolAnnotations(destructive_hint=False, idempotent_hint=True))
def write_note(name: str, text: str) -> Note:
    """Write a note, replacing one of the same name."""
    NOTES[name] = text
    log = os.environ.get("NOTES_LOG")
    if log:
        with open(log, "a") as file:
            file.write(f"{name}\n")
    return Note(name=name, text=text)


@server.tool()
def slow_note(seconds: float) -> str:
    """Take a while to answer."""
    time.sleep(seconds)
    return "done"


@server.tool()
def server_pid() -> int:
    """Which process answers: the same one while the connection lasts."""
    return os.getpid()


@server.tool()
def crash_server() -> str:
    """Stop the server in the middle of the call."""
    os._exit(3)


@server.tool()
def forget_tool(tool_name: str) -> str:
    """Stop offering one of this server's tools."""
    server.remove_tool(tool_name)
    return f"forgot {tool_name}"


if os.environ.get("NOTES_ARCHIVE"):

    @server.tool()
    def archive_note(name: str) -> str:
        """Archive a note."""
        return f"archived {name}"


def _guarded(app, token: str):
    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers", []))
            if headers.get(b"authorization", b"").decode() != f"Bearer {token}":
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
        await app(scope, receive, send)

    return guarded


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        import uvicorn

        app = server.streamable_http_app()
        token = os.environ.get("NOTES_TOKEN")
        uvicorn.run(
            _guarded(app, token) if token else app,
            host="127.0.0.1",
            port=int(sys.argv[2]),
            log_level="warning",
        )
    else:
        server.run()
