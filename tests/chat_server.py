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
    @staticmethod
    def as_events(payload: dict) -> bytes:
        raise NotImplementedError("this server answers in one piece")

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
                    status, payload = 200, server.wrap(body, answer, number=len(server.requests))
                if status == 200 and body.get("stream"):
                    data, content_type = server.as_events(payload), "text/event-stream"
                else:
                    data, content_type = json.dumps(payload).encode(), "application/json"
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    def wrap(self, body: dict, answer: dict, *, number: int) -> dict:
        """The whole response body around one scripted message."""
        return {
            "id": f"chatcmpl-{number}",
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
        }

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_port}/v1"

    def __enter__(self) -> "ChatServer":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


class MessagesServer(ChatServer):
    """The same, speaking Anthropic's Messages API (``POST /v1/messages``): each scripted answer
    is the message's ``content`` blocks."""

    def wrap(self, body: dict, answer: dict, *, number: int) -> dict:
        blocks = answer["content"]
        return {
            "id": f"msg_{number}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": blocks,
            "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 13, "output_tokens": 5},
        }

    @staticmethod
    def as_events(message: dict) -> bytes:
        """The message as the Messages API streams it (server-sent events), for ``"stream": true``."""
        events = [("message_start", {"message": {**message, "content": [], "stop_reason": None}})]
        for index, block in enumerate(message["content"]):
            if block["type"] == "text":
                start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
            else:
                start = {**block, "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [
                ("content_block_start", {"index": index, "content_block": start}),
                ("content_block_delta", {"index": index, "delta": delta}),
                ("content_block_stop", {"index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                    "usage": {"output_tokens": message["usage"]["output_tokens"]},
                },
            ),
            ("message_stop", {}),
        ]
        return "".join(
            f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n" for name, data in events
        ).encode()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_port}"


def tool_use_reply(*calls: tuple[str, str, dict], text: str = "") -> dict:
    """(call id, tool name, input) each, after ``text`` if any."""
    blocks = [{"type": "text", "text": text}] if text else []
    blocks += [{"type": "tool_use", "id": i, "name": name, "input": data} for i, name, data in calls]
    return {"content": blocks}


def text_blocks_reply(text: str) -> dict:
    return {"content": [{"type": "text", "text": text}]}
