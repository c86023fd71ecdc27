"""What the runs' and the approvals' socket consumers share beyond access (core.socket_auth)."""

from channels.consumer import get_handler_name


class NoConnectionHopPerMessage:
    """For a consumer whose every use of the database goes through ``database_sync_to_async``,
    which closes stale connections itself, before and after each call: its messages are
    handled without the hop Channels' ``dispatch`` makes, for every message, to close them.

    That hop is a thread-sensitive ``sync_to_async``: one thread, taken in turn by every socket
    of the process. One approval event for a tenant's 200 sockets made 200 hops in a row, 19%
    of the web process's time in bench W5, and most of the way to the event's last socket."""

    async def dispatch(self, message):
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)
