"""The server's launch index: a header's kernel is analysed with the launches that the workspace's `.cu` files
make (found by the scan at start, or from the editor's text when the file is open); the diagnostic lands in
the header with the launch as related information, and an edit of the launch re-checks the header."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from lsptools import open_doc, replace_all, start, wait_until
from pytest_lsp import LanguageClient

HEADER = (Path(__file__).parents[1] / "cli" / "fixtures" / "half_warp.cuh").read_text()
MAIN = '#include "k.cuh"\nvoid run(float* out) {\n    half_warp<<<1, 32>>>(out);\n}\n'


def _divergence(client: LanguageClient, uri: str) -> list[types.Diagnostic] | None:
    """The CL201 diagnostics of the last publication for `uri` (None before there is one)."""
    last = next((p for p in reversed(client.published) if p.uri == uri), None)
    return None if last is None else [d for d in last.diagnostics if d.code == "CL201"]


async def test_a_header_kernel_is_proven_by_a_launch_on_disk_and_rechecked_when_it_changes(
        bare_client: LanguageClient, tmp_path: Path):
    client = bare_client
    main = tmp_path / "main.cu"
    main.write_text(MAIN)
    await start(client, tmp_path)
    header = open_doc(client, tmp_path / "k.cuh", HEADER)

    def proven():
        found = _divergence(client, header)
        return found if found and found[0].related_information else None  # (the scan may finish after the open)

    [diagnostic] = await wait_until(proven, "CL201 proven by main.cu's launch")
    assert diagnostic.severity == types.DiagnosticSeverity.Warning
    assert "no launch" not in diagnostic.message and diagnostic.range.start.line == 3
    [related] = diagnostic.related_information
    assert related.location.uri == main.as_uri() and related.location.range.start.line == 2
    assert related.message == "`half_warp` is launched here with block 32×1×1"

    # the launch edited in the editor: 16 threads are one half-empty warp, which does not diverge
    uri = open_doc(client, main, MAIN)
    replace_all(client, uri, MAIN.replace("<<<1, 32>>>", "<<<1, 16>>>"), 2)
    await wait_until(lambda: _divergence(client, header) == [], "the header re-checked without CL201")
