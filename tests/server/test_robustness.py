"""Bad input gets an answer or is ignored; the server stays up."""

from __future__ import annotations

import json
import subprocess

import pytest
from lsprotocol import types
from lsptools import diagnostics_for, kernel, open_doc, replace_all, server_command
from pygls.exceptions import JsonRpcMethodNotFound
from pytest_lsp import LanguageClient


class RawConnection:
    """Bytes straight to the server's stdin, for messages no well-behaved client would send."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(server_command(), stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def send_bytes(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict) -> None:
        body = json.dumps(message).encode()
        self.send_bytes(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def receive(self) -> dict:
        length = 0
        while (line := self.proc.stdout.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        assert length, "the server closed its output"
        return json.loads(self.proc.stdout.read(length))

    def response_to(self, msg_id: int) -> dict:
        while (message := self.receive()).get("id") != msg_id or "method" in message:
            pass
        return message

    def close(self) -> int:
        self.send({"jsonrpc": "2.0", "id": 999, "method": "shutdown"})
        self.response_to(999)
        self.send({"jsonrpc": "2.0", "method": "exit"})
        return self.proc.wait(timeout=60)


@pytest.fixture
def raw(tmp_path):
    conn = RawConnection()
    conn.send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
    assert "capabilities" in conn.response_to(1)["result"]
    conn.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    yield conn
    if conn.proc.poll() is None:
        conn.proc.kill()
    conn.proc.wait()


def test_malformed_messages_are_survived(raw: RawConnection):
    raw.send_bytes(b"Content-Length: 12\r\n\r\n{not json!!}")
    raw.send_bytes(b"this is not a header\r\n\r\n")
    raw.send({"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"nonsense": True}})
    assert "error" in raw.response_to(2)
    raw.send({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
              "params": {"textDocument": {"uri": "file:///nowhere.cu"}, "position": {"line": 0, "character": 0}}})
    assert raw.response_to(3)["result"] is None
    assert raw.close() == 0


def test_unknown_methods(raw: RawConnection):
    raw.send({"jsonrpc": "2.0", "method": "cudalens/noSuchNotification", "params": {}})
    raw.send({"jsonrpc": "2.0", "id": 5, "method": "cudalens/noSuchRequest", "params": {}})
    assert raw.response_to(5)["error"]["code"] == JsonRpcMethodNotFound.CODE
    assert raw.close() == 0


async def test_out_of_range_positions_and_unopened_documents(client: LanguageClient):
    text = kernel("strided.cu")
    uri = open_doc(client, client.root / "t.cu", text)
    await diagnostics_for(client, uri, 1)
    far = types.Position(10_000, 10_000)
    hover = await client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), far))
    assert hover is None
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(types.TextDocumentIdentifier(uri), types.Range(far, far),
                               types.CodeActionContext(diagnostics=[]))
    )
    assert not actions
    # an edit whose range lies past the end of the document
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangePartial(range=types.Range(far, far), text="// tail\n")],
        )
    )
    await diagnostics_for(client, uri, 2)
    # edits, closes and requests for a document that was never opened
    ghost = (client.root / "ghost.cu").as_uri()
    replace_all(client, ghost, "__global__ void k() {}\n", 7)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(ghost)))
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(ghost)))
    assert not lenses
    replace_all(client, uri, text, 3)
    assert [d.code for d in await diagnostics_for(client, uri, 3)] == ["CL101"]
    assert not [m for m in client.messages if m.type == types.MessageType.Error]  # no pop-ups


async def test_a_10_mb_file_does_not_stop_the_server(client: LanguageClient):
    body = kernel("strided.cu")
    huge = body * (10_000_000 // len(body) + 1)
    big = open_doc(client, client.root / "huge.cu", huge)
    # not analysed: the CLI's limit and its CL001 finding
    assert [d.code for d in await diagnostics_for(client, big, 1)] == ["CL001"]
    uri = open_doc(client, client.root / "small.cu", body)
    assert [d.code for d in await diagnostics_for(client, uri, 1)] == ["CL101"]
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier((client.root / "huge.cu").as_uri()), types.Position(5, 9))
    )
    assert hover is None
