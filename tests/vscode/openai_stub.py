"""The LLM stand-in for the end-to-end test: a real HTTP server on loopback speaking the OpenAI chat-completions
API (JSON and SSE), answering every request with one canned reply and recording what it was sent."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Request:
    path: str
    authorization: str
    body: dict


class OpenAIStub:
    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[Request] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                stub.requests.append(Request(self.path, self.headers.get("Authorization", ""), body))
                if body.get("stream"):
                    stub._stream(self, body)
                else:
                    stub._send(self, "application/json", json.dumps(stub._completion(body)).encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> OpenAIStub:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def _completion(self, body: dict) -> dict:
        return {
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "stub"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": self.reply},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 1500},
        }

    def _stream(self, handler: BaseHTTPRequestHandler, body: dict) -> None:
        whole = self._completion(body)
        chunk = {**whole, "object": "chat.completion.chunk", "usage": None,
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": self.reply},
                              "finish_reason": "stop"}]}
        events = [chunk, {**chunk, "choices": [], "usage": whole["usage"]}]
        data = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
        self._send(handler, "text/event-stream", data.encode())

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, content_type: str, data: bytes) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", content_type)
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)
