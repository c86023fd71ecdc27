"""A TCP proxy on loopback between a client and a real server, that fails on purpose the way
networks do: an answer lost after the server acted, a gateway's 502, a refused connection, an
open socket cut."""

import socket
import threading
from contextlib import suppress

from tests.live_server import free_port

BAD_GATEWAY = b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


class FlakyProxy:
    def __init__(self, target_url: str):
        host, _, port = target_url.removeprefix("http://").partition(":")
        self.target = (host, int(port))
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.connections = 0  # accepted, in all
        self.requests = 0  # HTTP requests forwarded to the server
        self.lose_answers = 0  # the next n connections: the request reaches the server, its answer is lost
        self.bad_gateways = 0  # the next n connections: answered 502 by the proxy, nothing forwarded
        self.refusing = False  # new connections are closed at once
        self.cut_after: float | None = None  # each connection is cut this many seconds after it opened
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", self.port))
        threading.Thread(target=self._accept, daemon=True).start()

    def cut(self) -> None:
        """Close every connection open now, as a network that failed would."""
        with self._lock:
            sockets, self._open = self._open, []
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _cut(self, *sockets: socket.socket) -> None:
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self._listener.close()
        self.cut()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
                lose = self.lose_answers > 0
                self.lose_answers -= lose
                bad = not lose and self.bad_gateways > 0
                self.bad_gateways -= bad
            if self.refusing:
                client.close()
                continue
            threading.Thread(target=self._serve, args=(client, lose, bad), daemon=True).start()

    def _serve(self, client: socket.socket, lose: bool, bad: bool) -> None:
        if bad:
            with suppress(OSError):
                client.recv(65536)
                client.sendall(BAD_GATEWAY)
            client.close()
            return
        try:
            server = socket.create_connection(self.target)
        except OSError:
            client.close()
            return
        with self._lock:
            self._open += [client, server]
        if self.cut_after is not None:
            threading.Timer(self.cut_after, self._cut, (client, server)).start()
        threading.Thread(target=self._pump, args=(client, server, False, True), daemon=True).start()
        self._pump(server, client, lose, False)

    def _pump(self, source: socket.socket, sink: socket.socket, lose: bool, upstream: bool) -> None:
        try:
            while data := source.recv(65536):
                if upstream:
                    with self._lock:
                        self.requests += data.count(b" HTTP/1.1\r\n")
                if lose:  # the server has answered: it did the work; the client never hears of it
                    break
                sink.sendall(data)
        except OSError:
            pass
        for sock in (source, sink):
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
