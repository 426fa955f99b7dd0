"""CL405: per-thread arrays too large to be held in registers."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.file_context import FileContext
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.function_rule import FunctionRule
from cudalens.analysis.kernel_arrays import array_declarations
from cudalens.analysis.unit import Function

MAX_REGISTER_BYTES = 255 * 4  # a thread has at most 255 32-bit registers


class LargeLocalArray(FunctionRule):
    """## What it does
    Flags a per-thread array in a kernel or `__device__` helper (`float acc[512];`, not `__shared__`) whose
    constant size is larger than the 255 32-bit registers a thread can have at most (1020 bytes).

    ## Why is this bad?
    Such an array cannot live in registers, so the compiler places it in *local memory*: per-thread storage in
    device memory, cached in L1/L2. Every access becomes a memory instruction with hundreds of cycles of
    latency when it misses, and the spill traffic competes with the kernel's real loads. Smaller arrays may
    also end up there when they are indexed with values the compiler cannot resolve at compile time; the
    compiler's `-Xptxas -v` report (CL803) shows what actually spilled.

    ## Known problems
    `info`: whether local memory hurts depends on how often the array is touched and on the L1 hit rate. Only
    arrays declared in a function's own body with constant sizes are checked.

    ## Example
    ```cuda
    float acc[512];
    for (int k = 0; k < 512; ++k) acc[k] = 0.f;
    ```

    ## Use instead
    Give each thread fewer outputs (a smaller register tile, e.g. `float acc[8][8]` fully unrolled), or keep
    the large buffer in shared memory, cooperatively owned by the block.

    ## Fix safety
    No automatic fix: the work split between threads has to change.

    ## References
    - CUDA C++ Programming Guide, "Device Memory Accesses" — Local Memory
    - CUDA C++ Best Practices Guide, "Local Memory" and "Register Pressure"
    """

    code = "CL405"
    name = "large-local-array"
    summary = "Per-thread array larger than the register file allows (lives in local memory)"
    depends_on = NO_FACTS  # array sizes the compiler knows (constants)
    default_severity = Severity.INFO

    def check_function(self, context: FileContext, function: Function, kernel: str | None) -> Iterator[Finding]:
        for decl in array_declarations(context.unit, function):
            size = decl.bytes
            if decl.shared or size is None or size <= MAX_REGISTER_BYTES:
                continue
            yield context.finding(
                type(self), decl.declarator,
                f"Per-thread array `{decl.name}` is {size} B, more than the {MAX_REGISTER_BYTES} B of registers a "
                "thread can have: it lives in local memory (device memory cached in L1), each access a memory "
                "instruction",
                kernel=kernel, evidence={"array_bytes": size, "register_bytes": MAX_REGISTER_BYTES})
