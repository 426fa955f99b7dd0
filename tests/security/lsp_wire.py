"""A bare LSP client over real pipes, for tests that need to own the server process: its environment, its pid,
its signals, its stdin. Messages are read by a thread into a queue; nothing here interprets the protocol beyond
framing."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

WAIT_S = 60.0  # guards against a hang only: not a speed assertion


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def server_command() -> list[str]:
    return [sys.executable, "-m", "cudalens.server", "--log-file", os.environ.get("CUDALENS_TEST_LOG", "/dev/null"),
            "--log-level", "debug"]


class Server:
    """`cudalens serve` as a child of this test, with the environment the test gives it."""

    def __init__(self, env: dict[str, str], cwd: Path, command: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            command or server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=env, cwd=cwd,
        )
        self.messages: queue.Queue[dict] = queue.Queue()
        self.seen: list[dict] = []
        self._ids = 0
        threading.Thread(target=self._read, daemon=True).start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value)
            if length is None:
                continue
            self.messages.put(json.loads(out.read(length)))

    def send(self, message: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(frame({"jsonrpc": "2.0", **message}))
        self.proc.stdin.flush()

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def request(self, method: str, params: Any, timeout: float = WAIT_S) -> dict:
        self._ids += 1
        ident = self._ids
        self.send({"id": ident, "method": method, "params": params})
        return self.wait_for(lambda m: m.get("id") == ident and "method" not in m, f"the answer to {method}", timeout)

    def wait_for(self, predicate, what: str, timeout: float = WAIT_S) -> dict:
        for message in self.seen:
            if predicate(message):
                return message
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"gave up waiting for {what}"
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                continue
            self.seen.append(message)
            if "method" in message and "id" in message:  # a request from the server: answer it plainly
                self.send({"id": message["id"], "result": None})
            if predicate(message):
                return message

    def initialize(self, root: Path, options: dict | None = None, process_id: int | None = None) -> dict:
        answer = self.request("initialize", {
            "processId": process_id, "rootUri": root.as_uri(), "capabilities": {},
            "initializationOptions": options or {},
        })
        self.notify("initialized", {})
        return answer

    def open(self, path: Path, language: str = "python") -> str:
        uri = path.as_uri()
        self.notify("textDocument/didOpen", {"textDocument": {
            "uri": uri, "languageId": language, "version": 1, "text": path.read_text(),
        }})
        return uri

    def save(self, uri: str) -> None:
        self.notify("textDocument/didSave", {"textDocument": {"uri": uri}})

    def close_stdin(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=WAIT_S)
