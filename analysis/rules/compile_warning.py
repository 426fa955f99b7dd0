"""CL802: nvcc warned about the source (reported by cudalens.profiler)."""

from __future__ import annotations

from cudalens.analysis.rule_base import Rule


class CompileWarning(Rule):
    """## What it does
    Shows each warning nvcc's front end, the host preprocessor or ptxas prints for the file, with the front
    end's diagnostic number (`[#177-D]`) so it can be silenced with `-diag-suppress` or an ignore comment.

    ## Why is this bad?
    Warnings such as an unused variable, a narrowing conversion or a register-count adjustment often point at
    a slip in a kernel; some (ptxas lowering `-maxrregcount`) change how the kernel runs.

    ## Known problems
    Only the device compilation is run by `cudalens check --compile`; host compiler warnings show only when
    the full build runs.

    ## Example
    ```cuda
    int unused;   // warning #177-D: variable "unused" was declared but never referenced
    ```

    ## Use instead
    Address the warning, or suppress it with `// cudalens: ignore[CL802]`.

    ## Fix safety
    No automatic fix.

    ## References
    - NVIDIA CUDA Compiler Driver NVCC documentation, "--diag-suppress"
    """

    code = "CL802"
    name = "compile-warning"
    summary = "nvcc warning"
    source = "compiler"
