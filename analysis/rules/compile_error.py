"""CL801: nvcc rejected the source (reported by cudalens.profiler, not the static analyzer)."""

from __future__ import annotations

from cudalens.analysis.findings import Severity
from cudalens.analysis.rule_base import Rule


class CompileError(Rule):
    """## What it does
    Shows each error nvcc, its host preprocessor or ptxas reports for the file, at the line and column it
    names: in the `.cu` file, in the `#include`d header the error is in, or on the Python line of a
    `load_inline` / CuPy string that holds the CUDA source. Errors without a position (ptxas's "uses too much
    shared data") are put on the kernel they name.

    ## Why is this bad?
    The kernel does not build; nothing else (test, timing, profile) can run until it does.

    ## Known problems
    The front end reports positions in the preprocessed line; when a macro expansion introduced the offending
    token the whole line is marked. PyTorch host code (`torch::Tensor` wrappers, `PYBIND11_MODULE`) is not
    compiled by `cudalens check --compile` (its headers take ~15 s to parse), so its errors show only when
    the extension is built.

    ## Example
    ```cuda
    if (i < n) out[i] = a[i] + missing_var;   // error: identifier "missing_var" is undefined
    ```

    ## Use instead
    Fix the error nvcc describes.

    ## Fix safety
    No automatic fix.

    ## References
    - NVIDIA CUDA Compiler Driver NVCC documentation
    """

    code = "CL801"
    name = "compile-error"
    summary = "nvcc error"
    default_severity = Severity.ERROR
    source = "compiler"
