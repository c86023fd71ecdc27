"""A small server on 127.0.0.1 that speaks the chat-completions protocol, scripted by the test."""

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tool_calls_reply(*calls: tuple[str, str, str]) -> dict:
    """(call id, function name, arguments as JSON text) each."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            for call_id, name, arguments in calls
        ],
    }


def text_reply(text: str) -> dict:
    return {"role": "assistant", "content": text}


@dataclass(frozen=True)
class Slow:
    """An answer given only after ``seconds``."""

    seconds: float
    answer: dict | tuple[int, dict]


class ChatServer:
    def __init__(self):
        self.requests: list[dict] = []
        # Each answer: a message dict (HTTP 200), (status, error body), or either of them Slow.
        self.answers: list[dict | tuple[int, dict] | Slow] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                answer = (
                    server.answers.pop(0) if server.answers else (500, {"error": {"message": "unscripted"}})
                )
                if isinstance(answer, Slow):
                    time.sleep(answer.seconds)
                    answer = answer.answer
                if isinstance(answer, tuple):
                    status, payload = answer
                else:
                    status, payload = (
                        200,
                        {
                            "id": f"chatcmpl-{len(server.requests)}",
                            "object": "chat.completion",
                            "created": 1_790_000_000,
                            "model": body["model"],
                            "choices": [
                                {
                                    "index": 0,
                                    "message": answer,
                                    "finish_reason": "tool_calls" if answer.get("tool_calls") else "stop",
                                }
                            ],
                            "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                        },
                    )
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_port}/v1"

    def __enter__(self) -> "ChatServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
