"""Issue 34, item 4: files outside the workspace never reach the output. CI runs `cudalens check` on untrusted pull
requests: a pull request's `#include "/tmp/…/x.cuh"` or `"../../…"` made another file of the machine readable —
its `#define`s in findings, and with `--compile` nvcc's errors echoed its tokens as CL801 annotations. Headers
are read only under the folder the check runs in, the checked file's own and the include folders; the ones
skipped are named; a file that includes one is not compiled."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.security.test_ci_inputs import CONSOLE_SCRIPT, Repo

TOKEN = "supersecretabc123"  # what the outside file holds; the file itself is named plainly
OUTSIDE = f"""\
#define STRIDE_{TOKEN} 8
API_TOKEN={TOKEN}
"""


def kernel(include: str) -> str:
    return f"""\
#include "{include}"
__global__ void strided(const float* in, float* out, int n) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i * STRIDE_{TOKEN}];
}}
"""


@pytest.fixture
def machine(tmp_path: Path) -> tuple[Repo, Path]:
    assert CONSOLE_SCRIPT.is_file()
    outside = tmp_path / "elsewhere" / "deep" / "notes.cuh"
    outside.parent.mkdir(parents=True)
    outside.write_text(OUTSIDE)
    return Repo(tmp_path / "pr" / "src"), outside


@pytest.mark.parametrize("how", ["absolute", "climbing"])
def test_a_header_outside_the_workspace_is_not_read_and_is_named(machine, how):
    repo, outside = machine
    include = str(outside) if how == "absolute" else "../../elsewhere/deep/notes.cuh"
    repo.write("k.cu", kernel(include))
    run = repo.check("--format", "json", "k.cu")
    assert TOKEN not in run.out.replace(f"STRIDE_{TOKEN}", "") and "= 8" not in run.out
    assert "8 elements" not in run.out and "32 bytes" not in run.out  # the define's value never reached a message
    assert f'#include "{include}" is outside the workspace and its include folders: not read' in run.err
    inside = repo.write("notes.cuh", f"#define STRIDE_{TOKEN} 8\n")
    near = repo.write("near.cu", kernel("notes.cuh"))
    assert inside.is_file() and "not read" not in repo.check("near.cu").err  # a header of the workspace is read
    assert near.is_file()


@pytest.mark.skipif(shutil.which("nvcc") is None and not list(Path("/usr/local").glob("cuda*/bin/nvcc")),
                    reason="nvcc is not installed: nothing would be compiled anyway")
def test_a_file_including_one_is_not_compiled_and_says_so(machine):
    repo, outside = machine
    repo.write("k.cu", kernel(str(outside)))
    run = repo.check("--compile", "k.cu")
    assert TOKEN not in (run.out + run.err).replace(f"STRIDE_{TOKEN}", "")
    assert "CL801" not in run.out
    assert f'nothing was compiled: k.cu includes "{outside}" from outside the workspace and its include folders' in run.err
