"""Hover (kernel model, rule docs) and code lenses with their commands."""

from __future__ import annotations

import shutil

import pytest
from lsprotocol import types
from lsptools import diagnostics_for, kernel, open_doc, wait_until
from pytest_lsp import LanguageClient

from cudalens.server.commands import COMMANDS, OPTIMIZE, PROFILE, RUN_TESTS

NO_GPU_HERE = shutil.which("nvidia-smi") is None
_BUTTONS = {"Run tests": RUN_TESTS, "Profile": PROFILE, "Optimize": OPTIMIZE}


def run_commands(lenses) -> set[str]:
    """The run commands the lenses offer: a button each, or on a machine without a GPU, the inert lens that names
    those that need one ("Run tests · Profile: no GPU on this machine")."""
    offered = {lens.command.command for lens in lenses if lens.command.command}
    for lens in lenses:
        if lens.command.title.endswith(": no GPU on this machine"):
            offered |= {_BUTTONS[t] for t in lens.command.title.removesuffix(": no GPU on this machine").split(" · ")}
    return offered


def position_of(text: str, needle: str) -> types.Position:
    for number, line in enumerate(text.splitlines()):
        if needle in line:
            return types.Position(number, line.index(needle) + 1)
    raise AssertionError(needle)


async def hover(client: LanguageClient, uri: str, position: types.Position) -> str | None:
    result = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), position)
    )
    return None if result is None else result.contents.value


async def test_hover_on_a_kernel_shows_its_model(client: LanguageClient):
    text = kernel("strided.cu")
    uri = open_doc(client, client.root / "t.cu", text)
    await diagnostics_for(client, uri, 1)
    shown = await hover(client, uri, position_of(text, "scale_columns("))
    assert shown is not None
    assert "scale_columns" in shown
    assert "warp shape" in shown
    assert "CL101" in shown  # the kernel's findings
    assert "- features: 256 threads/block · 2 global accesses (50% coalesced)" in shown  # the analyzer's


async def test_hover_on_a_finding_shows_the_rule(client: LanguageClient):
    text = kernel("strided.cu")
    uri = open_doc(client, client.root / "t.cu", text)
    store = next(d for d in await diagnostics_for(client, uri, 1) if d.code == "CL101")
    shown = await hover(client, uri, store.range.start)
    assert shown is not None and "CL101" in shown and store.message in shown
    assert "What it does" in shown  # the rule's documentation


async def test_code_lens_per_kernel_with_commands(client: LanguageClient):
    text = kernel("strided.cu")
    uri = open_doc(client, client.root / "t.cu", text)
    await diagnostics_for(client, uri, 1)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    kernel_line = position_of(text, "scale_columns(").line
    assert {lens.range.start.line for lens in lenses} == {kernel_line}
    titles = [lens.command.title for lens in lenses]
    assert any("CL101" in t for t in titles), titles
    commands = {lens.command.command: lens.command.arguments for lens in lenses if lens.command.command}
    assert run_commands(lenses) == {"cudalens.runTests", "cudalens.profile"}  # Optimize: KernelBench files only
    if "cudalens.runTests" in commands:
        assert list(commands["cudalens.runTests"]) == [uri, "scale_columns"]


async def test_a_command_on_a_document_that_is_not_open_says_so(client: LanguageClient):
    caps = client.protocol.server_capabilities if hasattr(client.protocol, "server_capabilities") else None
    if caps is not None and caps.execute_command_provider is not None:
        assert set(COMMANDS) <= set(caps.execute_command_provider.commands)
    uri = (client.root / "t.cu").as_uri()
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams("cudalens.profile", [uri, "scale_columns"])
    )
    assert result["ok"] is False
    await wait_until(lambda: any("not an open" in m.message for m in client.messages), "the message")


DEFINED_SIZES = """#define TILE 32
#define ROWS 8
__global__ void transpose(float* out, const float* in, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * n + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        out[(y + j) * n + x] = tile[threadIdx.x][threadIdx.y + j];
}
void launch(float* out, const float* in, int n) {
    dim3 block(TILE, ROWS);
    dim3 grid(n / TILE, n / TILE);
    transpose<<<grid, block>>>(out, in, n);
}
"""


async def test_hover_and_lens_show_the_block_the_analysis_read_from_defined_sizes(client: LanguageClient):
    """`dim3 block(TILE, ROWS)` with `#define`d sizes: the hover and the lens show what the analysis read
    (KernelInfo.block, the launch site), not "not a single constant" and `<<<?, ?>>>`."""
    from cudalens.analysis.api import analyze_text

    info = analyze_text("t.cu", DEFINED_SIZES).kernels[0]
    if info.block is None:
        pytest.skip("this checkout's analysis does not resolve #define'd launch sizes yet (the severity branch does)")
    uri = open_doc(client, client.root / "t.cu", DEFINED_SIZES)
    await diagnostics_for(client, uri, 1)
    shown = await hover(client, uri, position_of(DEFINED_SIZES, "transpose("))
    assert "- block: 32×8×1 = 256 threads, 8 warps" in shown, shown
    assert "`<<<?, 32×8×1>>>` at line 18 (`?`: known only at run time)" in shown, shown
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    assert any("block 32×8×1" in lens.command.title for lens in lenses), [lens.command.title for lens in lenses]


async def test_optimize_is_offered_only_where_it_works(client: LanguageClient):
    """A .cu kernel gets Run tests and Profile, not an Optimize button that can only answer "needs a
    KernelBench-style Python file"; a KernelBench file gets it."""
    text = kernel("strided.cu")
    uri = open_doc(client, client.root / "t.cu", text)
    await diagnostics_for(client, uri, 1)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    assert run_commands(lenses) == {"cudalens.runTests", "cudalens.profile"}
    at = position_of(text, "scale_columns(")
    actions = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(at, at), types.CodeActionContext(diagnostics=[])))
    assert not any("Optimize" in a.title for a in actions or [])


@pytest.mark.skipif(not NO_GPU_HERE, reason="this machine has a GPU")
async def test_without_a_gpu_the_lens_says_so_instead_of_offering_the_runs(client: LanguageClient):
    """Once the server knows there is no GPU (its status said so), a .cu kernel's Run tests and Profile give way to
    one lens that says why; a pure-PyTorch ModelNew keeps Run tests (it runs on the CPU)."""
    await wait_until(lambda: any(s.get("gpu") is None for s in client.statuses), "the no-GPU status")
    uri = open_doc(client, client.root / "t.cu", kernel("strided.cu"))
    await diagnostics_for(client, uri, 1)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(types.TextDocumentIdentifier(uri)))
    titles = [lens.command.title for lens in lenses]
    assert "Run tests · Profile: no GPU on this machine" in titles, titles
    assert not {lens.command.command for lens in lenses if lens.command.command}, titles


def test_gpu_less_asks_each_command_what_it_asks_before_it_runs():
    from cudalens.profiler.gpu_specs import NoGpu
    from cudalens.server.lens import gpu_less

    none = NoGpu("nvidia-smi not found")
    assert gpu_less("/w/k.cu", "__global__ void k() {}", True, none) == {RUN_TESTS, PROFILE, OPTIMIZE}
    torch_only = "class ModelNew(nn.Module):\n    def forward(self, x):\n        return x.relu()\n"
    assert gpu_less("/w/m.py", torch_only, True, none) == {PROFILE}  # tested and optimized on the CPU
    assert gpu_less("/w/m.py", torch_only, False, none) == {PROFILE, OPTIMIZE}
    assert gpu_less("/w/k.cu", "", True, None) == frozenset()  # not known yet: the buttons stay
