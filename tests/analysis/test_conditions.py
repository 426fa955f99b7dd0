"""`#if` branches: which one the macros of a translation unit select (analysis/conditions.py), and the typedef
an included header chooses by a macro its includer defines first."""

from __future__ import annotations

from pathlib import Path

import pytest

from cudalens.analysis.api import analyze_text
from cudalens.analysis.conditions import evaluate
from cudalens.workspace.includes import DiskIncludes


@pytest.mark.parametrize(("text", "macros", "value"), [
    ("defined(ENABLE_BF16)", {"ENABLE_BF16": ""}, 1),
    ("defined ENABLE_BF16", {}, 0),
    ("!defined(A) && !defined(B)", {"B": "1"}, 0),
    ("defined(A) || (WIDTH >= 128)", {"WIDTH": "256"}, 1),
    ("VERSION == 0x0102", {"VERSION": "0x0102u"}, 1),
    ("UNDEFINED_NAME", {}, 0),  # the preprocessor's rule: a name no #define gives is 0
    ("N / 2 - 1 != 3", {"N": "8"}, 0),
    ("A != B", {"A": "1", "B": "2"}, 1),
    ("MAXIMIZE_KERNEL_SIZE", {"MAXIMIZE_KERNEL_SIZE": "true"}, 1),  # mmcv's carafe: C++'s literal in a macro
    ("USE_TC && !false", {"USE_TC": "(ARCH >= 80)", "ARCH": "90"}, 1),  # a macro of macros
])
def test_a_condition_is_evaluated_as_the_preprocessor_would(text: str, macros: dict, value: int) -> None:
    assert evaluate(text, macros) == value


@pytest.mark.parametrize(("text", "macros"), [
    ("__CUDA_ARCH__ >= 800", {}),  # the compiler's, not the text's
    ("defined(__CUDACC__)", {}),
    ("MODE == 2", {"MODE": "fast"}),  # a macro that is not a number
    ("A", {"A": "B", "B": "A"}),  # a cycle has no value
    ("import os", {}),
    ("(1", {}),
])
def test_what_the_text_does_not_define_is_unknown(text: str, macros: dict) -> None:
    assert evaluate(text, macros) is None


HEADER = """#include <cuda_bf16.h>
#if defined(ENABLE_BF16)
typedef __nv_bfloat16 floatX;
#else
typedef float floatX;
#endif
"""
KERNEL = """#include "common.h"
__global__ void k(const floatX* in, floatX* out, int n) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < n) out[row] = in[row * 64];
}
void h(const floatX* a, floatX* b, int n) { k<<<n / 256, 256>>>(a, b, n); }
"""


@pytest.mark.parametrize(("define", "element_bytes"), [("#define ENABLE_BF16\n", 2), ("", 4)])
def test_a_header_typedef_follows_the_macro_its_includer_defines_first(tmp_path: Path, define: str,
                                                                        element_bytes: int) -> None:
    (tmp_path / "common.h").write_text(HEADER)
    text = define + KERNEL
    report = analyze_text(str(tmp_path / "k.cu"), text, read_include=DiskIncludes())
    [finding] = [f for f in report.findings if f.code == "CL101"]
    assert dict(finding.evidence)["element_bytes"] == element_bytes


BODY_ARMS = """#ifndef ARMS_H
#define ARMS_H
%s
__global__ void k(const float* in, float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
#ifdef STRIDED_COPY
    out[i] = in[i * 64];
#else
    out[i] = in[i];
#endif
}
void h(const float* a, float* b, int n) { k<<<n / 256, 256>>>(a, b, n); }
#endif
"""


@pytest.mark.parametrize(("define", "line"), [("#define STRIDED_COPY", 8), ("", None)])
def test_a_kernel_body_runs_the_arm_its_macros_select(define: str, line: int | None) -> None:
    """kaolin's `#ifdef EXPERIMENTAL` … `#else gpuAtomicAdd(…)` inside a kernel: the arm the file's macros select
    is the code the lanes run, inside an include guard too (the guard's macro is the file's own)."""
    report = analyze_text("arms.cuh", BODY_ARMS % define)
    lines = [f.span.line for f in report.findings if f.code == "CL101"]
    assert lines == ([line] if line else [])


def test_a_kernel_in_an_arm_left_out_keeps_its_arrays() -> None:
    """A whole kernel under `#ifdef ENABLE_SM90` (flashinfer's mamba kernels) is analysed as a kernel is: the arms
    around it do not drop the arrays inside it."""
    text = ("#ifdef ENABLE_SM90\n__global__ void k(float* out) {\n    __shared__ float a[16384];\n"
            "    a[threadIdx.x] = 0.0f;\n    __syncthreads();\n    out[threadIdx.x] = a[threadIdx.x + 1];\n}\n#endif\n")
    report = analyze_text("k.cu", text)
    assert [f.span.line for f in report.findings if f.code == "CL403"] == [3]
