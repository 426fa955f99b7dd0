"""Which files hold CUDA, one answer for everyone (analysis/file_kinds.py): a `.h` header whose text defines a
kernel is read like a `.cuh` (issue 35: libraries keep kernels in `.h` headers, which got no hints at all)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.analysis.api import analyze_text
from cudalens.analysis.file_kinds import builds_cuda, holds_cuda, is_cuda_source

KERNEL = (Path(__file__).resolve().parent / "fixtures" / "row_sums_bank_conflict.cu").read_text()


@pytest.mark.parametrize(("path", "text", "cuda"), [
    ("k.cu", "", True),
    ("k.cuh", "int x;", True),
    ("rows.h", KERNEL, True),
    ("ops.hpp", "template <int N> __device__ float twice(float x) { return 2 * x; }", True),
    ("plain.h", "int plain(int x) { return x; }  // host code only: __global_size", False),
    ("model.py", "from torch.utils.cpp_extension import load_inline", True),
    ("train.py", "import torch", False),
    ("notes.txt", KERNEL, False),
])
def test_what_holds_cuda(path, text, cuda):
    assert holds_cuda(path, text) is cuda
    assert is_cuda_source(path) is path.endswith((".cu", ".cuh"))


def test_a_modelnew_in_plain_pytorch_is_read_but_has_nothing_to_compile():
    model = "import torch\nclass ModelNew(torch.nn.Module):\n    pass\n"
    assert holds_cuda("m.py", model) and not builds_cuda("m.py", model)
    assert builds_cuda("m.py", model + "from torch.utils.cpp_extension import load_inline\n")
    assert builds_cuda("rows.h", KERNEL) and not builds_cuda("plain.h", "int x;")


def test_a_header_with_a_kernel_gets_its_findings_and_a_plain_one_none():
    assert [f.code for f in analyze_text("rows.h", KERNEL).findings] == ["CL301"]
    plain = analyze_text("plain.h", "int plain(int x) { return x; }\n")
    assert not plain.is_cuda and plain.findings == []


def test_check_reads_headers_in_a_folder(tmp_path, cli):
    (tmp_path / "rows.h").write_text(KERNEL)
    (tmp_path / "plain.h").write_text("int plain(int x) { return x; }\n")
    result = cli("check", ".", cwd=tmp_path)
    assert result.code == 1 and "rows.h:11:14: CL301" in result.out and "plain.h" not in result.out
