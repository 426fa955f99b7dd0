"""Which files hold CUDA: the one answer the analyzer, `cudalens check`, the language server, the profiler and the
folder watcher share (each had its own suffix list, and headers were in none).

- `.cu` and `.cuh` files are CUDA sources.
- A C/C++ header (`.h`, `.hpp`, `.hh`, `.inl`) is CUDA when its text defines device code (`__global__`,
  `__device__`): libraries keep their kernels in headers that a `.cu` file includes.
- A `.py` file is analysed when it may build CUDA (`load_inline`, CuPy's `RawKernel`/`RawModule`, a `__global__`
  in a string, a KernelBench `ModelNew`); it has CUDA to compile (and a GPU to need) only when it builds a kernel:
  a `ModelNew` in plain PyTorch is tested on the CPU.
"""

from __future__ import annotations

import re

CUDA_SUFFIXES = (".cu", ".cuh")
HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".inl")
CHECKED_SUFFIXES = (*CUDA_SUFFIXES, *HEADER_SUFFIXES, ".py")  # what `cudalens check` reads in a folder
KERNELS_IN_PYTHON = ("__global__", "load_inline", "RawKernel", "RawModule")
CUDA_IN_PYTHON = (*KERNELS_IN_PYTHON, "cuda_sources", "ModelNew")
_DEVICE_CODE = re.compile(r"\b__(?:global|device)__\b")


def is_cuda_source(path: str) -> bool:
    """A `.cu`/`.cuh` file: CUDA whatever it holds (compiled by nvcc, scanned for launches)."""
    return path.lower().endswith(CUDA_SUFFIXES)


def is_cuda_file(path: str, text: str) -> bool:
    """A CUDA source, or a C/C++ header whose text defines device code: what the analyzer reads as CUDA."""
    lower = path.lower()
    return lower.endswith(CUDA_SUFFIXES) or (lower.endswith(HEADER_SUFFIXES) and _DEVICE_CODE.search(text) is not None)


def may_contain_cuda(text: str) -> bool:
    """A Python file that may build CUDA: a few substring searches."""
    return any(marker in text for marker in CUDA_IN_PYTHON)


def holds_cuda(path: str, text: str) -> bool:
    """Whether the file at `path`, whose text is `text`, is CUDA the analyzer reads."""
    return is_cuda_file(path, text) or (path.lower().endswith(".py") and may_contain_cuda(text))


def builds_cuda(path: str, text: str) -> bool:
    """Whether the file has CUDA to compile and a GPU to run it on: a CUDA source or header, or Python that builds
    a kernel (not a `ModelNew` written in PyTorch alone)."""
    if path.lower().endswith(".py"):
        return any(marker in text for marker in KERNELS_IN_PYTHON)
    return is_cuda_file(path, text)
