"""What a first build's host glue includes while the precompiled ATen header is still being made.

The glue (split_source: the user's host functions) is compiled over the lite header (fast_inline._LITE_HEADER:
`ATen/ATen.h`, every operator of ATen) precompiled, ≈ 1 s. The first build on a machine cannot wait for that
header, which takes longer to make than the glue over it unprecompiled (the H200, 2026-12-03: 7.5-9.5 s of g++,
the longest part of a fresh first save and of a cold optimize round). A glue needs far less: the Tensor class
(its methods come with it) and the few operators it calls, each of which ATen declares in a header of its own
(`ATen/ops/empty_like.h`). Here (2 cores, CPU torch) the Swish glue compiled in 3.5 s over these, 6.2 s over the
lite header. A glue that needs more than this finds fails to compile, and the build compiles it again over the
lite header (fast_inline._build): the cost of a wrong guess is one short compile, never a wrong module.
Standard library only.
"""

from __future__ import annotations

import re
from pathlib import Path

# `torch::empty_like(`, `at::zeros({…`, `torch::empty<…`: a call of what may be one of ATen's operators
_CALLED = re.compile(r"\b(?:torch|at)::(\w+)\s*[(<{]")
_USES_CUDA_CONTEXT = re.compile(r"\b(?:at|c10)::cuda::|\bCUDAGuard\b|\bgetCurrentCUDAStream\b")


def prelude(glue: str, torch_include: Path) -> str:
    """The `#include`s (and torch's namespace) that stand in for the lite header in front of `glue`."""
    ops = sorted({name for name in _CALLED.findall(glue) if (torch_include / "ATen" / "ops" / f"{name}.h").is_file()})
    lines = ["#include <ATen/core/Tensor.h>", *(f"#include <ATen/ops/{name}.h>" for name in ops)]
    if "AT_DISPATCH_" in glue:
        lines.append("#include <ATen/Dispatch.h>")
    lines += ["#include <cuda_runtime.h>", "#include <vector>"]
    if _USES_CUDA_CONTEXT.search(glue):  # as the lite header has them: only where torch was built with CUDA
        lines += ["#if __has_include(<cublas_v2.h>) && __has_include(<c10/cuda/impl/cuda_cmake_macros.h>)",
                  "#include <ATen/cuda/CUDAContext.h>", "#include <c10/cuda/CUDAGuard.h>", "#endif"]
    lines.append("namespace torch { using namespace at; }")
    return "\n".join(lines) + "\n"
