"""An HTTP receiver on 127.0.0.1 that records what it is sent and answers as scripted."""

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Receiver:
    def __init__(self):
        self.received: list[dict] = []
        self.statuses: list[int] = []  # answered in order; 204 once they run out
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # the standard library's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.received.append({"path": self.path, "headers": dict(self.headers), "body": body})
                self.send_response(receiver.statuses.pop(0) if receiver.statuses else 204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_port}/hooks/kindgi"

    def __enter__(self) -> "Receiver":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
