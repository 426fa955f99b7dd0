"""Protocol fuzzing, bounded: 2,400 hostile or careless frames from a fixed seed, sent to one real server over its
pipes. Every 40 cases a hover request must be answered (after a frame whose length was too long, the first probe
may be eaten: a second one follows); at the end the server still answers a hover on its open kernel, shuts down
cleanly, and no case left a traceback on its stderr or in its log. CUDALENS_FUZZ_LOG=path keeps the log."""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
from lsptools import RawConnection

SEED = 20261201
CASES = 2400
PROBE_EVERY = 40
KERNEL = """__global__ void scale_columns(const float* in, float* out, int n, float s) {
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y;
    if (x < n) {
        out[x * n + y] = in[y * n + x] * s;
    }
}
"""
# Requests and notifications a fuzzed client may send; never exit/shutdown/initialize (they end the session),
# nor workspace/executeCommand with real command names (they would run compilers and Coder calls).
METHODS = ["textDocument/hover", "textDocument/codeAction", "textDocument/codeLens", "textDocument/didChange",
           "textDocument/didOpen", "textDocument/didClose", "textDocument/didSave", "textDocument/completion",
           "$/cancelRequest", "$/setTrace", "workspace/didChangeConfiguration", "workspace/didChangeWatchedFiles",
           "workspace/executeCommand", "cudalens/noSuchMethod", "textDocument/diagnostic", "initialized"]
ODD_TEXT = ["\f", "\v", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\r", "\r\n", "\n", "é", "😀", "\x00",
            "\ud800", "__global__", "}", "{", "//", "/*", '"']


def odd_value(rng: random.Random, depth: int = 0):
    choice = rng.randrange(12 if depth < 3 else 8)
    if choice == 0:
        return rng.choice([0, -1, 1, 2**31, 2**40, -(2**63), 10**30, 0.5, float("1e308")])
    if choice == 1:
        return rng.choice([None, True, False])
    if choice in (2, 3):
        return "".join(rng.choice(ODD_TEXT) for _ in range(rng.randrange(0, 12)))
    if choice == 4:
        return rng.choice(["file:///nowhere.cu", "untitled:x", "", "file://", "http://h/x.cu", "file:///%00"])
    if choice == 5:
        return {"line": odd_value(rng, 3), "character": odd_value(rng, 3)}
    if choice in (6, 7):
        return rng.randrange(-5, 50)
    if choice in (8, 9):
        return {rng.choice(["textDocument", "position", "range", "uri", "text", "contentChanges", "id", "x",
                            "version", "settings", "changes", "command", "arguments"]): odd_value(rng, depth + 1)
                for _ in range(rng.randrange(1, 4))}
    return [odd_value(rng, depth + 1) for _ in range(rng.randrange(0, 4))]


def plausible_params(rng: random.Random, method: str, doc: str) -> dict:
    position = {"line": rng.randrange(-2, 40), "character": rng.randrange(-2, 200)}
    end = {"line": rng.randrange(-2, 40), "character": rng.randrange(0, 200)}
    text = "".join(rng.choice([*ODD_TEXT, "x", " ", KERNEL[: rng.randrange(len(KERNEL))]])
                   for _ in range(rng.randrange(0, 8)))
    ident = {"uri": doc, "version": rng.randrange(0, 10**6)}
    return {
        "textDocument/didOpen": {"textDocument": {"uri": doc, "languageId": rng.choice(["cuda-cpp", "python", "x"]),
                                                  "version": rng.randrange(10**6), "text": KERNEL + text}},
        "textDocument/didChange": {"textDocument": ident, "contentChanges": [
            {"range": {"start": position, "end": end}, "text": text} if rng.random() < 0.8 else {"text": text}
            for _ in range(rng.randrange(1, 4))]},
        "textDocument/codeAction": {"textDocument": ident, "range": {"start": position, "end": end},
                                    "context": {"diagnostics": []}},
        "$/cancelRequest": {"id": rng.choice([1, "x", 10**9])},
        "workspace/executeCommand": {"command": "cudalens.noSuchCommand", "arguments": [odd_value(rng)]},
    }.get(method, {"textDocument": ident, "position": position})


def frame(body: bytes, rng: random.Random) -> bytes:
    """A frame for `body`, often wrong in one way."""
    kind = rng.randrange(14)
    length = len(body)
    if kind == 0:
        return b"content-length: %d\r\n\r\n" % length + body
    if kind == 1:
        return b"Content-Length: %d\n\n" % length + body
    if kind == 2:
        return b"Content-Length: %d\r\n\r\n" % max(length + rng.randrange(-20, 21), 0) + body
    if kind == 3:
        return b"Content-Length: %d\r\n\r\n" % rng.choice([10**13, 2**63, 10**40]) + body
    if kind == 4:
        return b"Content-Length: %s\r\n\r\n" % rng.choice([b"-5", b"abc", b"", b"0x10", b"1e3", b" 12 3"]) + body
    if kind == 5:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))) + b"\r\n"
    if kind == 6:
        cut = rng.randrange(len(body) + 1)
        return b"Content-Length: %d\r\n\r\n" % cut + body[:cut]
    if kind == 7:
        flipped = bytearray(body)
        for _ in range(rng.randrange(1, 4)):
            flipped[rng.randrange(len(flipped))] = rng.randrange(256)
        return b"Content-Length: %d\r\n\r\n" % len(flipped) + bytes(flipped)
    if kind == 8:
        return b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: %d\r\n\r\n" % length + body
    if kind == 9:
        return b"X-Other: 1\r\n\r\n" + body
    return b"Content-Length: %d\r\n\r\n" % length + body


def case(rng: random.Random, msg_id: int, doc: str) -> bytes:
    method = rng.choice(METHODS)
    message: object = {"jsonrpc": "2.0", "method": method}
    if rng.random() < 0.6:
        message["id"] = msg_id
    message["params"] = plausible_params(rng, method, doc) if rng.random() < 0.6 else odd_value(rng)
    shape = rng.randrange(10)
    if shape == 0:
        message.pop("jsonrpc")
    elif shape == 1:
        message["jsonrpc"] = rng.choice(["1.0", 2, None])
    elif shape == 2:
        message["id"] = odd_value(rng)
    elif shape == 3:
        message = [message]
    elif shape == 4:
        message = odd_value(rng)
    body = json.dumps(message).encode("utf-8", "surrogatepass")
    if shape == 5:
        body = b"[" * rng.randrange(1000, 100_000)
    return frame(body, rng)


def probe(conn: RawConnection, msg_id: int) -> dict:
    hover = {"textDocument": {"uri": "file:///nowhere.cu"}, "position": {"line": 0, "character": 0}}
    for attempt in range(2):
        conn.send({"jsonrpc": "2.0", "id": msg_id + attempt, "method": "textDocument/hover", "params": hover})
    return conn.response_to(msg_id + 1, timeout=60)


def test_the_server_survives_a_fuzzed_client(tmp_path):
    log = Path(os.environ.get("CUDALENS_FUZZ_LOG", tmp_path / "server.log"))
    conn = RawConnection(str(log))
    try:
        conn.initialize(tmp_path)
        uri = conn.open(tmp_path / "probe.cu", KERNEL)
        assert conn.diagnostics(uri, 1)
        rng = random.Random(SEED)
        fuzz_doc = (tmp_path / "fuzz.cu").as_uri()
        for n in range(CASES):
            conn.send_bytes(case(rng, 10 + n, fuzz_doc))
            if n % PROBE_EVERY == PROBE_EVERY - 1:
                assert "result" in probe(conn, 100_000 + 2 * n), f"no answer after case {n}"
        hover = {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 17}}
        answer = probe(conn, 900_000)
        assert "result" in answer
        conn.send({"jsonrpc": "2.0", "id": 900_010, "method": "textDocument/hover", "params": hover})
        assert "scale_columns" in json.dumps(conn.response_to(900_010)["result"])
        assert conn.close() == 0
    finally:
        conn.kill()
    for where, text in (("stderr", conn.stderr_text()), ("log", log.read_text(errors="replace"))):
        assert "Traceback" not in text, f"a traceback in the server's {where}:\n{text[text.find('Traceback') - 300:][:3000]}"
