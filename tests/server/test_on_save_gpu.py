"""On a GPU: a save runs the correctness test, the timing against PyTorch and Nsight Compute through the real
server, and the results land as diagnostics, hover and code lens (run by the lead on the H200)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from lsprotocol import types
from lsptools import codes, open_doc, start, wait_until
from pytest_lsp import LanguageClient
from test_on_save import ends, save

pytestmark = pytest.mark.gpu

DATA = Path(__file__).resolve().parents[1] / "runtime" / "data"
COLD_S = 900.0  # a cold load_inline build plus ncu: a guard against a hang, not a speed assertion


def copy(root: Path, *names: str) -> Path:
    for name in names:
        shutil.copy(DATA / name, root / name)
    return root / names[0]


async def test_save_gives_verdict_timing_and_ncu_hints_on_the_uncoalesced_line(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, {"settings": {"onSave": {"test": True, "time": True, "profile": True}}})
    path = copy(bare_client.root, "transpose.cu", "transpose_ref.py")
    text = path.read_text()
    uri = open_doc(bare_client, path, text)
    bare_client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    params = await wait_until(
        lambda: next((p for p in reversed(bare_client.published)
                      if p.uri == uri and p.version == 1 and "CL904" in codes(p.diagnostics)), None),
        "CL904 hints", COLD_S,
    )
    hint_lines = {d.range.start.line for d in params.diagnostics if d.code == "CL904"}
    assert 7 in hint_lines  # `out[c * rows + r] = in[r * cols + c];`
    assert "CL901" not in codes(params.diagnostics) and "CL902" not in codes(params.diagnostics)
    assert "CL910" in codes(params.diagnostics)  # the Judge's measured verdict on the kernel
    # the hints are published before the save's progress ends
    [end] = await wait_until(lambda: ends(bare_client) or None, "the save's progress to end", 60)
    assert "trials passed" in end and "vs PyTorch" in end and "profile hint" in end
    name = text.index("transpose_naive")
    position = types.Position(text[:name].count("\n"), name - text.rfind("\n", 0, name) - 1 + 1)
    hover = await bare_client.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri), position))
    assert hover is not None
    value = hover.contents.value
    assert "Last run" in value and "- test:" in value and "- timing:" in value and "- ncu, line 8" in value
    assert "**Judge" in value and "Judge (predicted" not in value  # measured (CL910's rule text says "predicted")
    lenses = await bare_client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    assert any("✓ 5/5" in lens.command.title and "vs PyTorch" in lens.command.title for lens in lenses)


async def test_an_illegal_access_is_cl902_and_the_server_lives_on(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, {"settings": {"onSave": {"test": True}}})
    path = copy(bare_client.root, "illegal_access.cu", "illegal_access_ref.py")
    uri = open_doc(bare_client, path, path.read_text())
    save(bare_client, uri)
    await wait_until(
        lambda: any(p.uri == uri and "CL902" in codes(p.diagnostics) for p in bare_client.published), "CL902", COLD_S
    )
    right = copy(bare_client.root, "transpose.cu", "transpose_ref.py")
    other = open_doc(bare_client, right, right.read_text())
    save(bare_client, other)  # the next job gets a fresh worker and a working CUDA context
    await wait_until(lambda: any("trials passed" in m for m in ends(bare_client)), "the next test to pass", COLD_S)


async def test_a_cu_file_is_built_when_it_opens_and_its_first_save_reuses_the_build(bare_client: LanguageClient):
    """With onSave.test on, opening a .cu file builds its extension in the worker (compile only: the `build` job),
    and the status item says so; the first save's test then finds it built (its build line is the same module)."""
    await start(bare_client, bare_client.root, {"settings": {"onSave": {"test": True}, "logLevel": "info"}})
    path = copy(bare_client.root, "transpose.cu", "transpose_ref.py")
    uri = open_doc(bare_client, path, path.read_text())
    built = await wait_until(
        lambda: next((m.message for m in bare_client.log_messages if "ahead of its first save" in m.message), None),
        "the build on open", COLD_S,
    )
    assert "'built': 'cudalens_transpose_" in built and "fast " in built, built
    said = [s.get("message") for s in bare_client.statuses]
    assert "building transpose.cu ahead of its first save" in said  # the status item says why the GPU is busy
    save(bare_client, uri)
    await wait_until(lambda: ends(bare_client) or None, "the save's verdict", COLD_S)
    assert "trials passed" in ends(bare_client)[-1]
    # the log's notifications come from the logging handler's own queue: the verdict may come first
    builds = await wait_until(
        lambda: [m.message for m in bare_client.log_messages if m.message.startswith("transpose.cu: fast ")] or None,
        "the save's build line", 10,
    )
    def modules(line: str) -> set[str]:  # "fast NAME (MODULE/KERNELS)", a fresh build's "… in 12.3 s (…)" after it
        return set(re.findall(r"\((\w+/\w+)\)", line))

    assert builds and modules(builds[-1]) and modules(builds[-1]) <= modules(built)  # nothing built again
