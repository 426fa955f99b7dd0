"""CL403: static `__shared__` arrays of one kernel adding up to more than 48 KB."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import NO_FACTS, Fact
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.kernel_arrays import array_declarations
from cudalens.analysis.launch_limits import STATIC_SHARED_LIMIT
from cudalens.analysis.model import KernelModel
from cudalens.analysis.rule_base import Rule


class StaticSharedMemoryOverLimit(Rule):
    """## What it does
    Flags the `__shared__` array declaration at which a kernel's static shared memory goes over 48 KB
    (49152 bytes) per block.

    ## Why is this bad?
    Static shared memory is limited to 48 KB per block on every GPU; ptxas rejects the kernel ("uses too much
    shared data"), so the file does not build. Larger tiles are possible on Volta and later (up to 227 KB on
    Hopper) but only as *dynamic* shared memory with an explicit opt-in.

    ## Known problems
    Counts the arrays declared in the kernel's own body whose sizes are compile-time constants (literals,
    macros, `const`/`constexpr` values); arrays sized by template parameters, declared at file scope or in
    `__device__` helpers are not counted, so the total is a lower bound. An element type that is a template
    parameter takes its instantiation's size; without one, 1 byte (the message then says "at least", and that
    it holds whatever the type is). Arrays in `#if`/`#else` arms count only in the arm the file's macros select
    (`#define MAXIMIZE_KERNEL_SIZE true`), the same choice a typedef in such arms gets; where the arms rest on
    what only the build defines (`__CUDA_ARCH__`, `-D` flags), an array declared in two arms counts once
    (the first arm's).

    ## Example
    ```cuda
    __global__ void gemm(const float* a, const float* b, float* c, int n) {
        __shared__ float as[128][64];     // 32 KB
        __shared__ float bs[64][128];     // 32 KB: 64 KB in all
        ...
    }
    ```

    ## Use instead
    ```cuda
    __global__ void gemm(const float* a, const float* b, float* c, int n) {
        extern __shared__ float smem[];   // 64 KB, sized at the launch
        float* as = smem;
        float* bs = smem + 128 * 64;
        ...
    }
    cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
    gemm<<<grid, block, 64 * 1024>>>(a, b, c, n);
    ```

    ## Fix safety
    No automatic fix: moving to dynamic shared memory changes the launch code as well.

    ## References
    - CUDA C++ Programming Guide, "Shared Memory" (compute capability 7.x and later: dynamic opt-in above 48 KB)
    - CUDA C++ Programming Guide, "Features and Technical Specifications"
    """

    code = "CL403"
    name = "static-shared-memory-over-limit"
    summary = "Static __shared__ arrays over 48 KB per block (ptxas rejects the kernel)"
    depends_on = NO_FACTS  # array sizes the compiler knows (constants)
    default_severity = Severity.ERROR

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        total = 0
        seen = []
        bytes_of, assumed = _template_element_bytes(kernel)
        for decl in (a for a in array_declarations(kernel.unit, kernel.function, bytes_of) if a.shared):
            if decl.bytes is None:
                continue
            total += decl.bytes
            seen.append(decl)
            if total > STATIC_SHARED_LIMIT:
                others = tuple((d.declarator, f"`{d.name}`: {d.bytes} B") for d in seen[:-1])
                params = list(dict.fromkeys(d.elem_param for d in seen if d.elem_param))
                # an instantiation's type is its size; an unknown one is taken at 1 byte, the least any type has
                lower = [p for p in params if p in assumed]
                given = [f"{p} = {kernel.template_types[p]}" for p in params if p not in assumed]
                at = "at least " if lower else ""
                yield kernel.finding(
                    type(self), decl.declarator,
                    (f"Static shared memory of `{kernel.name}` reaches {at}{total} B with `{decl.name}` "
                     f"({at}{decl.bytes} B)" if others else f"`{decl.name}` is {at}{total} B of static shared memory")
                    + (f" ({', '.join(given)})" if given else "")
                    + (f" whatever type {' and '.join(f'`{p}`' for p in lower)} is (1 byte or more)" if lower else "")
                    + f", over the {STATIC_SHARED_LIMIT} B (48 KB) per-block limit: ptxas rejects the kernel; use "
                    "dynamic shared memory with cudaFuncAttributeMaxDynamicSharedMemorySize",
                    evidence={"static_shared_bytes": total, "limit_bytes": STATIC_SHARED_LIMIT},
                    related=others)
                return


def _template_element_bytes(kernel: KernelModel) -> tuple[dict[str, int], set[str]]:
    """The element size to take for each type template parameter: its instantiation's (a launch's, an explicit
    instantiation's), else 1 byte, a bound every type meets; and the parameters taken at that bound."""
    premises = kernel.context.premises
    assumed = {a.name for a in premises.assumptions if a.fact is Fact.TEMPLATE} if premises is not None else set()
    out: dict[str, int] = {}
    for name, type_name in kernel.template_types.items():
        info = None if name in assumed else kernel.unit.types.lookup(type_name)
        out[name] = info.size if info is not None else 1
    return out, {name for name in out if name in assumed or kernel.unit.types.lookup(
        kernel.template_types[name]) is None}
