"""The `kindgi` command line client. It talks to a Kindgi server over HTTP and WebSocket only."""

from kindgi.cli.main import main

__all__ = ["main"]
