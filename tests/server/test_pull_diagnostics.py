"""Clients that pull diagnostics (textDocument/diagnostic) and can be asked to re-pull get no pushes."""

from __future__ import annotations

from lsprotocol import types
from lsptools import codes, kernel, open_doc, replace_all, start, wait_until
from pytest_lsp import LanguageClient


async def pull(client: LanguageClient, uri: str) -> types.RelatedFullDocumentDiagnosticReport:
    return await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
    )


async def test_pull_client_gets_reports_and_no_pushes(bare_client: LanguageClient):
    result = await start(bare_client, bare_client.root, pull=True)
    assert result.capabilities.diagnostic_provider is not None
    uri = open_doc(bare_client, bare_client.root / "t.cu", kernel("strided.cu"))
    assert codes((await pull(bare_client, uri)).items) == ["CL101"]
    replace_all(bare_client, uri, kernel("copy.cu"), 2)
    assert codes((await pull(bare_client, uri)).items) == []
    assert bare_client.published == []


async def test_pull_client_is_asked_to_repull_after_an_outside_change(bare_client: LanguageClient):
    (bare_client.root / "tile.cuh").write_text("#define TILE 32\n")
    await start(bare_client, bare_client.root, pull=True)
    uri = open_doc(bare_client, bare_client.root / "t.cu", '#include "tile.cuh"\n' + kernel("strided.cu"))
    await pull(bare_client, uri)
    (bare_client.root / "tile.cuh").write_text("#define TILE 16\n")
    await wait_until(lambda: bare_client.diagnostic_refresh_count > 0, "workspace/diagnostic/refresh")
    assert codes((await pull(bare_client, uri)).items) == ["CL101"]


async def test_push_client_is_not_offered_pull(client: LanguageClient):
    uri = open_doc(client, client.root / "t.cu", kernel("strided.cu"))
    await wait_until(lambda: any(p.uri == uri for p in client.published), "pushed diagnostics")
