"""Bad input gets an answer or is ignored; the server stays up."""

from __future__ import annotations

from lsprotocol import types
from lsptools import RawConnection, diagnostics_for, kernel, open_doc, raw_fixture, replace_all, wait_until  # noqa: F401 - the `raw` fixture
from pygls.exceptions import JsonRpcMethodNotFound
from pytest_lsp import LanguageClient


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
    # an edit whose range lies past the end of the document: refused, and said so (text_sync.py)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(version=2, uri=uri),
            [types.TextDocumentContentChangePartial(range=types.Range(far, far), text="// tail\n")],
        )
    )
    await wait_until(lambda: any("past the end of the document" in m.message for m in client.log_messages),
                     "the refused change in the log")
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


async def test_a_kernel_too_deep_gets_its_not_analysed_diagnostic(client: LanguageClient):
    # a generated 20,000-term sum: said so in the editor within a second, not 50 s of a busy server then a pass
    terms = " + ".join(f"a[{i}]" for i in range(20_000))
    uri = open_doc(client, client.root / "deep.cu", f"__global__ void k(float* a) {{ a[threadIdx.x * 32] = {terms}; }}\n")
    [found] = await diagnostics_for(client, uri, 1)
    assert found.code == "CL002" and found.severity == types.DiagnosticSeverity.Information
    assert found.message.startswith("Kernel `k` not analysed: an expression of 20,000 terms (line 1)")
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 60)))
    assert hover is None or hover.contents
