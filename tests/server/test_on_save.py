"""On save: compile → test → time → profile in the background, merged into the document's diagnostics, with
progress, cancel on the next edit, one message when there is no GPU, and no worker left after exit."""

from __future__ import annotations

import functools
import runpy
import shutil
import textwrap
from pathlib import Path

import lsptools
import pytest
from lsprotocol import types
from lsptools import codes, open_doc, replace_all, start
from pytest_lsp import LanguageClient

needs_nvcc = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc (the CUDA toolkit) is not installed")
needs_torch = pytest.mark.skipif(
    __import__("importlib").util.find_spec("torch") is None, reason="torch is not installed"
)

SYNTAX_ERROR = """\
__global__ void scale(float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * a
}
"""

# The profiler's compile tests' kernels; `heavy` spills under its __launch_bounds__(1024, 2).
SPILLS = textwrap.dedent(
    runpy.run_path(str(Path(__file__).resolve().parents[1] / "profiler" / "test_compile.py"))["RESOURCES"]
).lstrip("\n")
HEAVY_LINE = next(i for i, line in enumerate(SPILLS.splitlines()) if " heavy(" in line)

# A KernelBench problem with a pure-PyTorch ModelNew: the runtime harness runs it on CPU torch.
RIGHT = (Path(__file__).resolve().parents[1] / "runtime" / "data" / "kb_relu_right.py").read_text()
_BODY = "return torch.where(x > 0, x, torch.zeros_like(x))"
WRONG = RIGHT.replace(_BODY, "return x")
SLOW = RIGHT.replace(_BODY, "import time\n        time.sleep(600)\n        return torch.relu(x)")


# Runs start a worker and import torch: on a busy 2-core machine that can take a while. A guard against a hang.
RUN_S = 240.0
wait_until = functools.partial(lsptools.wait_until, timeout=RUN_S)


def settings(**on_save) -> dict:
    return {"settings": {"onSave": {"compile": False, **on_save}}}


def save(client: LanguageClient, uri: str) -> None:
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))


async def diagnostics_with(client: LanguageClient, uri: str, version: int, code: str) -> list[types.Diagnostic]:
    params = await wait_until(
        lambda: next((p for p in reversed(client.published)
                      if p.uri == uri and p.version == version and code in codes(p.diagnostics)), None),
        f"{code} for {uri} version {version}",
    )
    return list(params.diagnostics)


def ends(client: LanguageClient) -> list[str | None]:
    return [v.message for values in client.progress_reports.values() for v in values
            if isinstance(v, types.WorkDoneProgressEnd)]


def reports(client: LanguageClient) -> list[str]:
    return [v.message or "" for values in client.progress_reports.values() for v in values
            if isinstance(v, types.WorkDoneProgressReport)]


def worker_pids(server_pid: int) -> list[int]:
    """The server's worker processes (children running `boot.py worker_main`)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            ppid = int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (proc / "cmdline").read_bytes()
        except (OSError, IndexError, ValueError):
            continue
        if ppid == server_pid and b"boot.py\0worker_main" in cmd:
            found.append(int(proc.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


async def save_compiled(client: LanguageClient, name: str, text: str, code: str) -> tuple[str, list]:
    """Opens `name` with compile-on-save, saves it, and waits for `code` among its version-1 diagnostics."""
    await start(client, client.root, settings(compile=True))
    uri = open_doc(client, client.root / name, text)
    save(client, uri)
    return uri, await diagnostics_with(client, uri, 1, code)


@needs_nvcc
async def test_a_syntax_error_is_cl801_at_its_line_on_save(bare_client: LanguageClient):
    _, found = await save_compiled(bare_client, "scale.cu", SYNTAX_ERROR, "CL801")
    [error] = [d for d in found if d.code == "CL801"]
    assert error.range.start.line in (2, 3)  # nvcc names the line of the statement or the brace after it
    assert error.severity == types.DiagnosticSeverity.Error
    await wait_until(lambda: ends(bare_client), "the progress to end")
    assert any("compiling" in m for m in reports(bare_client))


@needs_nvcc
async def test_a_spilling_kernel_is_cl803_on_its_name_merged_with_static_findings(bare_client: LanguageClient):
    uri, found = await save_compiled(bare_client, "heavy.cu", SPILLS, "CL803")
    [spill] = [d for d in found if d.code == "CL803"]
    assert spill.range.start.line == HEAVY_LINE and "spills" in spill.message
    # the static analysis of the same version is still there
    static = next(p for p in bare_client.published if p.uri == uri and p.version == 1)
    assert set(codes(static.diagnostics)) <= set(codes(found))
    hover = await bare_client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(HEAVY_LINE, SPILLS.splitlines()[HEAVY_LINE].index("heavy") + 1))
    )
    assert hover is not None and "Last run" in hover.contents.value and "regs" in hover.contents.value
    assert "Judge" in hover.contents.value


@needs_nvcc
async def test_relative_include_dirs_of_the_pyproject_reach_nvcc_on_save(bare_client: LanguageClient):
    # nvcc runs in a temporary folder: `include-dirs = ["include"]` must arrive there as the project's folder
    root = bare_client.root
    (root / "pyproject.toml").write_text('[tool.cudalens]\ninclude-dirs = ["include"]\n')
    (root / "include").mkdir()
    (root / "include" / "params.cuh").write_text("// the project's shared parameters\n")
    (root / "src").mkdir()
    await start(bare_client, root, settings(compile=True))
    uri = open_doc(bare_client, root / "src" / "heavy.cu", '#include "params.cuh"\n' + SPILLS)
    save(bare_client, uri)
    compiled = await wait_until(
        lambda: next((p for p in reversed(bare_client.published) if p.uri == uri
                      and any(c.startswith("CL80") for c in codes(p.diagnostics))), None),
        "the compiler's findings",
    )
    assert "CL801" not in codes(compiled.diagnostics), [d.message for d in compiled.diagnostics]
    assert "CL803" in codes(compiled.diagnostics)


@needs_nvcc
async def test_an_edit_after_save_drops_the_compile_results(bare_client: LanguageClient):
    uri, _ = await save_compiled(bare_client, "scale.cu", SYNTAX_ERROR, "CL801")
    fixed = SYNTAX_ERROR.replace("* a\n", "* a;\n")
    replace_all(bare_client, uri, fixed, 2)
    later = await wait_until(
        lambda: next((p for p in reversed(bare_client.published) if p.uri == uri and p.version == 2), None),
        "diagnostics for version 2",
    )
    assert "CL801" not in codes(later.diagnostics)  # never shown for a text it was not computed for


@needs_torch
async def test_a_right_pure_pytorch_model_passes_on_cpu(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, settings(test=True))
    uri = open_doc(bare_client, bare_client.root / "relu.py", RIGHT, language="python")
    save(bare_client, uri)
    await wait_until(lambda: ends(bare_client), "the on-save run to end")
    published = [p for p in bare_client.published if p.uri == uri and p.version == 1]
    assert published and "CL901" not in codes(published[-1].diagnostics)
    assert any("5/5" in (m or "") for m in ends(bare_client)), ends(bare_client)
    assert "testing: trial 5/5" in reports(bare_client), reports(bare_client)  # progress per trial
    # the status item says the server is busy while the run lasts, and idle after
    await wait_until(lambda: len(bare_client.statuses) >= 3, "busy and idle statuses")
    busy = bare_client.statuses[1:]
    assert busy[0]["busy"] is True and busy[0]["message"] == "running relu.py"
    assert busy[-1]["busy"] is False


@needs_torch
async def test_a_wrong_pure_pytorch_model_is_cl901_on_modelnew(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, settings(test=True))
    uri = open_doc(bare_client, bare_client.root / "relu.py", WRONG, language="python")
    save(bare_client, uri)
    found = await diagnostics_with(bare_client, uri, 1, "CL901")
    [failure] = [d for d in found if d.code == "CL901"]
    line = WRONG.splitlines().index("class ModelNew(nn.Module):")
    assert failure.range.start.line == line
    assert WRONG.splitlines()[line][failure.range.start.character:failure.range.end.character] == "ModelNew"


@needs_torch
async def test_an_edit_cancels_the_running_test_and_kills_its_job(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, settings(test=True))
    uri = open_doc(bare_client, bare_client.root / "slow.py", SLOW, language="python")
    save(bare_client, uri)
    await wait_until(lambda: any(m.startswith("testing:") for m in reports(bare_client)), "the test job to start")
    server = bare_client._server.pid
    [busy] = await wait_until(lambda: worker_pids(server), "the worker")
    replace_all(bare_client, uri, RIGHT, 2)
    await wait_until(lambda: "cancelled" in ends(bare_client), "the run to be cancelled")
    await wait_until(lambda: not alive(busy), "the sleeping job's worker to be killed")
    assert not [p for p in bare_client.published if p.uri == uri and "CL902" in codes(p.diagnostics)]
    (bare_client.root / "slow.py").write_text(RIGHT)  # as the editor does on save
    save(bare_client, uri)  # the next save runs on a fresh worker
    await wait_until(lambda: any("5/5" in (m or "") for m in ends(bare_client)), "the next run to pass")


@needs_torch
async def test_the_worker_is_gone_after_the_server_exits(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, settings(test=True))
    uri = open_doc(bare_client, bare_client.root / "relu.py", RIGHT, language="python")
    save(bare_client, uri)
    await wait_until(lambda: ends(bare_client), "the on-save run to end")
    workers = worker_pids(bare_client._server.pid)
    assert workers
    await bare_client.shutdown_session()
    await wait_until(lambda: not any(alive(p) for p in workers), "the workers to die with the server")


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a GPU")
async def test_without_a_gpu_the_user_is_told_once(bare_client: LanguageClient):
    await start(bare_client, bare_client.root, settings(test=True, profile=True))
    root = bare_client.root
    (root / "scale_ref.py").write_text(textwrap.dedent("""
        import torch
        class Model(torch.nn.Module):
            def forward(self, x):
                return x * 2
        def get_inputs():
            return [torch.randn(64)]
        def get_init_inputs():
            return []
    """))
    text = SYNTAX_ERROR.replace("* a\n", "* a;\n")
    uri = open_doc(bare_client, root / "scale.cu", text)
    for version in (1, 2):
        if version == 2:
            replace_all(bare_client, uri, text + "\n", 2)
        save(bare_client, uri)
        await wait_until(lambda n=version: len(ends(bare_client)) == n, f"run {version} to end")
    told = [m for m in bare_client.messages if "no GPU" in m.message]
    assert len(told) == 1 and "compiling still runs" in told[0].message


async def test_a_worker_that_cannot_start_is_reported_once_not_blamed_on_the_model(bare_client: LanguageClient):
    options = settings(test=True)
    options["settings"]["worker"] = {"python": str(bare_client.root / "no-such-python")}
    await start(bare_client, bare_client.root, options)
    uri = open_doc(bare_client, bare_client.root / "relu.py", RIGHT, language="python")
    for n in (1, 2):
        save(bare_client, uri)
        await wait_until(lambda n=n: len(ends(bare_client)) == n, f"run {n} to end")
    told = [m.message for m in bare_client.messages if "worker could not start" in m.message]
    assert len(told) == 1 and "worker.python" in told[0]
    assert not any("CL902" in codes(p.diagnostics) for p in bare_client.published)
