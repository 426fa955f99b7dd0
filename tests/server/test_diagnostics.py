"""Diagnostics as you type: on open, on change, inside Python files, bursts of edits, closing."""

from __future__ import annotations

import asyncio

from lsprotocol import types
from lsptools import (
    codes,
    diagnostics_for,
    kernel,
    open_doc,
    replace_all,
    wait_until,
)
from pytest_lsp import LanguageClient


async def test_open_reports_uncoalesced_store(client: LanguageClient):
    uri = open_doc(client, client.root / "strided.cu", kernel("strided.cu"))
    diagnostics = await diagnostics_for(client, uri, 1)
    cl101 = [d for d in diagnostics if d.code == "CL101"]
    assert cl101, codes(diagnostics)
    store = cl101[0]
    # the store `out[x * n + y]` is on line 6 (0-based 5)
    assert store.range.start.line == 5
    assert store.source == "cudalens"
    assert store.severity == types.DiagnosticSeverity.Warning
    assert store.code_description is not None and "cl101" in store.code_description.href


async def test_change_updates_diagnostics_with_version(client: LanguageClient):
    uri = open_doc(client, client.root / "k.cu", kernel("copy.cu"))
    assert "CL101" not in codes(await diagnostics_for(client, uri, 1))
    replace_all(client, uri, kernel("strided.cu"), 2)
    assert "CL101" in codes(await diagnostics_for(client, uri, 2))
    replace_all(client, uri, kernel("copy.cu"), 3)
    assert "CL101" not in codes(await diagnostics_for(client, uri, 3))


async def test_cuda_inside_python_lands_on_python_lines(client: LanguageClient):
    text = kernel("embedded.py")
    uri = open_doc(client, client.root / "ext.py", text, language="python")
    diagnostics = await diagnostics_for(client, uri, 1)
    cl101 = [d for d in diagnostics if d.code == "CL101"]
    assert cl101, codes(diagnostics)
    expected_line = next(i for i, line in enumerate(text.splitlines()) if "out[x * n + y]" in line)
    assert cl101[0].range.start.line == expected_line
    line = text.splitlines()[expected_line]
    assert cl101[0].range.start.character == line.index("out[x * n + y]")


async def test_plain_python_costs_nothing(client: LanguageClient):
    plain = open_doc(client, client.root / "plain.py", "import os\nprint(os.getcwd())\n", language="python")
    cuda = open_doc(client, client.root / "t.cu", kernel("strided.cu"))
    await diagnostics_for(client, cuda, 1)
    assert all(p.uri != plain for p in client.published)


async def test_non_ascii_text_before_a_finding_shifts_utf16_columns(client: LanguageClient):
    # 'é' is one UTF-16 unit, '😀' two: the diagnostic must start where the editor shows `out[`.
    text = kernel("strided.cu").replace("        out[x * n + y]", "/*é😀*/  out[x * n + y]")
    uri = open_doc(client, client.root / "u.cu", text)
    diagnostics = await diagnostics_for(client, uri, 1)
    cl101 = [d for d in diagnostics if d.code == "CL101"]
    assert cl101, codes(diagnostics)
    line = text.splitlines()[cl101[0].range.start.line]
    chars = line.index("out[x * n + y]")
    assert cl101[0].range.start.character == chars + 1  # the emoji counts twice in UTF-16


async def test_burst_of_50_edits_ends_with_the_last_version_only(client: LanguageClient):
    uri = open_doc(client, client.root / "b.cu", kernel("copy.cu"))
    await diagnostics_for(client, uri, 1)
    start = len(client.published)
    for version in range(2, 52):
        # the last edit brings the uncoalesced store in; every earlier one is coalesced
        replace_all(client, uri, kernel("strided.cu" if version == 51 else "copy.cu") + "\n" * version, version)
    final = await diagnostics_for(client, uri, 51)
    assert "CL101" in codes(final)
    await asyncio.sleep(0.3)  # let anything still in flight arrive, so a late stale publish would show
    after = [p.version for p in client.published[start:] if p.uri == uri]
    assert after[-1] == 51
    assert after == sorted(after), f"a stale version was published after a newer one: {after}"
    assert len(after) < 50, f"the burst was not coalesced: {after}"


async def test_closed_document_is_cleared_and_gets_nothing_more(client: LanguageClient):
    uri = open_doc(client, client.root / "c.cu", kernel("strided.cu"))
    assert await diagnostics_for(client, uri, 1)
    # a version that takes a while to analyse, closed while its analysis runs
    big = "\n".join(kernel("strided.cu").replace("scale_columns", f"scale_{i}") for i in range(100))
    replace_all(client, uri, big, 2)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await wait_until(lambda: client.published[-1].uri == uri and client.published[-1].version is None, "the clearing")
    marker = open_doc(client, client.root / "m.cu", kernel("copy.cu"))
    await diagnostics_for(client, marker, 1)  # everything queued before has been handled by now
    cleared = next(i for i, p in enumerate(client.published) if p.uri == uri and p.version is None)
    assert list(client.published[cleared].diagnostics) == []
    # Nothing for the closed document after its clearing. (Whether version 2 was published before the close
    # was read depends on how fast the analysis thread ran: on a loaded machine it can finish first.)
    assert not any(p.uri == uri for p in client.published[cleared + 1:])


async def test_an_unsaved_buffer_is_served_by_its_language(client: LanguageClient):
    uri = "untitled:Untitled-1"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "cuda-cpp", 1, kernel("strided.cu")))
    )
    assert "CL101" in codes(await diagnostics_for(client, uri, 1))
