"""A real local HTTP server speaking the OpenAI chat-completions API, replaying scripted replies.

The one stand-in the tests use: the `openai` client talks to it over TCP exactly as to a real endpoint
(JSON replies and SSE streams), and it records every request (body and headers) for assertions.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Scripted:
    """One scripted answer: a reply (content), or an HTTP error (status, headers), after an optional delay."""

    content: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error: str = "scripted error"
    delay_s: float = 0.0
    prompt_tokens: int = 1000
    completion_tokens: int = 500
    send_usage: bool = True


def reply(content: str, **kw) -> Scripted:
    return Scripted(content=content, **kw)


def error(status: int, message: str = "scripted error", **kw) -> Scripted:
    return Scripted(status=status, error=message, **kw)


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict
    at: float = 0.0  # time.monotonic() when it arrived

    @property
    def prompt(self) -> str:
        return "\n".join(m.get("content", "") for m in self.body.get("messages", []))


class FakeOpenAI:
    """Replays `script` in order, or answers each request with `responder(body)` (a reply that depends on the
    prompt: benchmarks/search_standin.py)."""

    def __init__(
        self,
        script: list[Scripted] | None = None,
        model: str = "fake-coder",
        responder: Callable[[dict], Scripted] | None = None,
    ) -> None:
        self.script = list(script or [])
        self.responder = responder
        self.requests: list[Recorded] = []
        self.model = model
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:  # quiet
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with fake._lock:
                    fake.requests.append(
                        Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body, time.monotonic())
                    )
                    step = fake.script.pop(0) if fake.script else None
                if step is None:
                    step = fake.responder(body) if fake.responder else Scripted("I have nothing more to add.")
                if step.delay_s:
                    time.sleep(step.delay_s)
                try:
                    if not self.path.endswith("/chat/completions"):
                        fake._json(
                            self, 404, {"error": {"message": "not found", "type": "invalid_request_error"}}
                        )
                    elif step.status != 200:
                        fake._json(
                            self,
                            step.status,
                            {
                                "error": {
                                    "message": step.error,
                                    "type": "server_error",
                                    "code": str(step.status),
                                }
                            },
                            step.headers,
                        )
                    elif body.get("stream"):
                        fake._sse(self, step, body)
                    else:
                        fake._json(self, 200, fake._completion(step, body))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()

    def _completion(self, step: Scripted, body: dict) -> dict:
        return {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": step.content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": step.prompt_tokens,
                "completion_tokens": step.completion_tokens,
                "total_tokens": step.prompt_tokens + step.completion_tokens,
            }
            if step.send_usage
            else None,
        }

    @staticmethod
    def _json(
        handler: BaseHTTPRequestHandler, status: int, payload: dict, headers: dict | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            handler.send_header(k, v)
        handler.end_headers()
        handler.wfile.write(data)

    def _sse(self, handler: BaseHTTPRequestHandler, step: Scripted, body: dict) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/event-stream")
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Connection", "close")
        handler.end_headers()
        base = {
            "id": f"chatcmpl-{len(self.requests)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": body.get("model", self.model),
        }

        def send(obj: dict) -> None:
            handler.wfile.write(f"data: {json.dumps(obj)}\n\n".encode())
            handler.wfile.flush()

        text = step.content
        pieces = [text[i : i + 40] for i in range(0, len(text), 40)] or [""]
        for i, piece in enumerate(pieces):
            delta = {"content": piece} if i else {"role": "assistant", "content": piece}
            send({**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]})
        send({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
        if step.send_usage and (body.get("stream_options") or {}).get("include_usage"):
            send(
                {
                    **base,
                    "choices": [],
                    "usage": {
                        "prompt_tokens": step.prompt_tokens,
                        "completion_tokens": step.completion_tokens,
                        "total_tokens": step.prompt_tokens + step.completion_tokens,
                    },
                }
            )
        handler.wfile.write(b"data: [DONE]\n\n")
        handler.wfile.flush()
        handler.close_connection = True
