"""WebSocket clients of the approvals stream, in a process of their own (so that the process
making decisions does not slow their hearing): `python -m bench.listeners URL TOKEN COUNT`.

Prints `ready` once every client is connected, then one line per client per decision heard:
`<approval id> <time.monotonic()>` (a clock this machine's processes share)."""

import asyncio
import contextlib
import json
import sys
import time

from websockets.asyncio.client import connect


async def listen(url: str, token: str, count: int) -> None:
    socket_url = url.replace("http://", "ws://") + "/ws/approvals/"
    headers = {"Authorization": f"Bearer {token}"}
    sockets = [await connect(socket_url, additional_headers=headers, origin=url) for _ in range(count)]
    print("ready", flush=True)

    async def read(socket) -> None:
        async for message in socket:
            heard = time.monotonic()
            event = json.loads(message)
            if event["type"] == "approval.decided":
                print(event["approval"]["id"], heard, flush=True)

    await asyncio.gather(*(read(socket) for socket in sockets))


if __name__ == "__main__":
    url, token, count = sys.argv[1:]
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(listen(url, token, int(count)))
