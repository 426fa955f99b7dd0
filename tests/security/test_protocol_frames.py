"""A careless or hostile client over real pipes: one bad frame must not cost the server its hearing, a huge
length its memory, and every request gets an answer (transport.py, protocol.py). Each case fails on pygls 2.1.1's
own reader: the server stayed alive but deaf, died of a MemoryError, or never answered."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
from lsptools import RawConnection, kernel, raw_fixture  # noqa: F401 - the `raw` fixture

HOVER = {"textDocument": {"uri": "file:///nowhere.cu"}, "position": {"line": 0, "character": 0}}


def body(msg_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "textDocument/hover", "params": HOVER}).encode()


# The attacker's bytes: each is a hover request (id 7) framed wrongly.
BAD_FRAMES = {
    "lowercase header": b"content-length: %d\r\n\r\n%s" % (len(body(7)), body(7)),
    "LF-only headers": b"Content-Length: %d\n\n%s" % (len(body(7)), body(7)),
    "length 10 short": b"Content-Length: %d\r\n\r\n%s" % (len(body(7)) - 10, body(7)),
    "length 10 long": b"Content-Length: %d\r\n\r\n%s" % (len(body(7)) + 10, body(7)),
    "absurd length": b"Content-Length: 10000000000000\r\n\r\n%s" % body(7),
    "garbage before": b"\x00\xff junk\r\nX: y\r\n\r\nContent-Length: %d\r\n\r\n%s" % (len(body(7)), body(7)),
}




@pytest.mark.parametrize("name", BAD_FRAMES)
def test_one_bad_frame_leaves_the_server_listening(raw: RawConnection, name: str):
    raw.send_bytes(BAD_FRAMES[name])
    for probe in (8, 9):  # the next frames are read; a length too long ate part of the first of them at most
        raw.send_bytes(b"Content-Length: %d\r\n\r\n%s" % (len(body(probe)), body(probe)))
    assert raw.response_to(9)["result"] is None
    assert raw.proc.poll() is None
    assert raw.close() == 0
    assert "Traceback" not in raw.stderr_text()


def test_a_huge_length_does_not_allocate_it(raw: RawConnection):
    raw.send_bytes(b"Content-Length: 10000000000000\r\n\r\n")
    assert raw.request("textDocument/hover", HOVER)["result"] is None
    assert "MemoryError" not in raw.stderr_text()


def test_malformed_json_with_an_id_gets_a_parse_error(raw: RawConnection):
    broken = b'{"jsonrpc": "2.0", "id": 41, "method": "textDocument/hover", "params": {'
    raw.send_bytes(b"Content-Length: %d\r\n\r\n%s" % (len(broken), broken))
    assert raw.response_to(41)["error"]["code"] == -32700


def test_a_message_without_jsonrpc_gets_invalid_request(raw: RawConnection):
    raw.send({"id": 42, "method": "textDocument/hover", "params": HOVER})
    assert raw.response_to(42)["error"]["code"] == -32600
    raw.send({"jsonrpc": "2.0", "id": [1], "method": "textDocument/hover", "params": HOVER})
    raw.send([1, 2, 3])
    errors = [next(m for m in iter(raw.receive, None) if "error" in m and "method" not in m) for _ in range(2)]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(None, -32600), (None, -32600)]


def test_requests_after_shutdown_get_invalid_request(raw: RawConnection):
    assert raw.request("shutdown")["result"] is None
    answer = raw.request("textDocument/hover", HOVER)
    assert answer["error"]["code"] == -32600 and "shutting down" in answer["error"]["message"]
    raw.notify("exit", None)
    assert raw.proc.wait(timeout=60) == 0


def test_a_request_before_initialize_gets_server_not_initialized():
    conn = RawConnection()
    try:
        conn.send({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": HOVER})
        assert conn.response_to(3)["error"]["code"] == -32002
    finally:
        conn.kill()


def test_an_out_of_range_process_id_does_not_fail_initialize(tmp_path):
    conn = RawConnection()
    try:
        answer = conn.initialize(tmp_path, process_id=2**40)
        assert "capabilities" in answer["result"]
        assert conn.request("textDocument/hover", HOVER)["result"] is None
        assert conn.close() == 0
        assert "Traceback" not in conn.stderr_text() and "not a process id" in conn.stderr_text()
    finally:
        conn.kill()


def test_a_second_initialize_is_refused_and_edits_still_apply(raw: RawConnection, tmp_path):
    # pygls 2.1.1 answered it and built a new workspace: the open document was no longer in it, and every later
    # didChange was dropped as "not open" (no diagnostics for version 2, ever).
    uri = raw.open(tmp_path / "k.cu", kernel("copy.cu"))
    assert raw.diagnostics(uri, 1) == []
    other = tmp_path / "other"
    other.mkdir()
    again = raw.request("initialize", {"processId": None, "rootUri": other.as_uri(), "capabilities": {}})
    assert again["error"]["code"] == -32600 and "result" not in again
    raw.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2},
                                          "contentChanges": [{"text": kernel("strided.cu")}]})
    assert [d["code"] for d in raw.diagnostics(uri, 2)] == ["CL101"]
    hover = raw.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 1, "character": 20}})
    assert "scale_columns" in str(hover["result"])
    assert raw.close() == 0
    assert "Traceback" not in raw.stderr_text()


def test_initialized_without_params_starts_the_watcher_and_the_launch_index(tmp_path):
    # JSON-RPC 2.0 lets a message leave `params` out; lsprotocol's InitializedParams is required, so the
    # notification failed to parse and the session never started its watcher nor scanned the launches.
    fixtures = Path(__file__).parents[1] / "cli" / "fixtures"
    (tmp_path / "main.cu").write_text('#include "k.cuh"\nvoid run(float* out) {\n    half_warp<<<1, 32>>>(out);\n}\n')
    conn = RawConnection()
    try:
        assert "capabilities" in conn.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(),
                                                             "capabilities": {}})["result"]
        conn.send({"jsonrpc": "2.0", "method": "initialized"})
        header = conn.open(tmp_path / "k.cuh", (fixtures / "half_warp.cuh").read_text())
        while not any(d["code"] == "CL201" and d.get("relatedInformation") for d in last_published(conn, header)):
            conn.receive()  # the scan may finish after the open: the header is checked again then
        logs = [m["params"]["message"] for m in conn.received if m.get("method") == "window/logMessage"]
        assert any("watching 1 folders for outside changes" in m for m in logs), logs
        assert conn.close() == 0
    finally:
        conn.kill()


def last_published(conn: RawConnection, uri: str) -> list[dict]:
    found = [m["params"] for m in conn.received
             if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri]
    return found[-1]["diagnostics"] if found else []


def test_a_request_without_params_is_dispatched_by_its_method(raw: RawConnection):
    # An unknown method without params got "invalid params" (-32602) before, as if its params were wrong.
    raw.send({"jsonrpc": "2.0", "id": 51, "method": "cudalens/noSuchMethod"})
    assert raw.response_to(51)["error"]["code"] == -32601
    raw.send({"jsonrpc": "2.0", "id": 52, "method": "textDocument/hover"})  # its params are required
    assert raw.response_to(52)["error"]["code"] == -32602
    raw.send({"jsonrpc": "2.0", "method": "cudalens/noSuchNotification"})
    raw.send({"jsonrpc": "2.0", "id": 53, "method": "shutdown"})
    assert raw.response_to(53)["result"] is None
    raw.send({"jsonrpc": "2.0", "method": "exit"})
    assert raw.proc.wait(timeout=60) == 0
    assert "Traceback" not in raw.stderr_text()
