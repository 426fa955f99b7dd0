"""CL404: launches asking for more than 48 KB of shared memory without raising the kernel's dynamic limit."""

from __future__ import annotations

import re
from collections.abc import Iterator

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import NO_FACTS
from cudalens.analysis.file_context import FileContext
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.kernel_arrays import static_shared_bytes
from cudalens.analysis.launch_limits import SHARED_MAX_PER_BLOCK, STATIC_SHARED_LIMIT
from cudalens.analysis.rule_base import Rule

_OPT_IN_CALLS = ("cudaFuncSetAttribute", "cuFuncSetAttribute")
_OPT_IN_ATTRS = ("cudaFuncAttributeMaxDynamicSharedMemorySize", "CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES")
_IDENT = re.compile(r"[A-Za-z_]\w*")
_SET_ATTRIBUTE = re.compile(rb"\b(?:cuda|cu)FuncSetAttribute\b")


def opted_in(unit: FileContext) -> set[str] | None:
    """Names of the kernels whose dynamic shared memory limit the file raises; None when a call raises it
    for a function it names in a way we cannot resolve (a function pointer variable), i.e. maybe any."""
    names: set[str] = set()
    kernels = {k.name for k in unit.unit.kernels} | {launch.kernel for launch in unit.unit.launches}
    root = unit.unit.tree.root_node
    for m in _SET_ATTRIBUTE.finditer(unit.unit.source):  # a text search: far cheaper than a tree walk
        node = root.descendant_for_byte_range(m.start(), m.start())
        while node is not None and node.type != "call_expression":
            node = node.parent
        if node is None:
            continue
        func = node.child_by_field_name("function")
        args = node.child_by_field_name("arguments")
        if func is None or args is None or not args.named_children \
                or ts.text(func).split("::")[-1] not in _OPT_IN_CALLS \
                or not any(attr in ts.text(args) for attr in _OPT_IN_ATTRS):
            continue
        named = set(_IDENT.findall(ts.text(args.named_children[0]))) & kernels
        if not named:
            return None
        names |= named
    return names


class DynamicSharedMemoryWithoutOptIn(Rule):
    """## What it does
    Flags a launch whose constant dynamic shared memory (the third `<<<...>>>` argument), plus the kernel's
    static shared memory, is over 48 KB (49152 bytes) when the file never calls
    `cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes)` for that kernel; and any
    launch over 227 KB, which no GPU gives one block.

    ## Why is this bad?
    A kernel may use at most 48 KB of shared memory per block unless its dynamic limit is raised first; above
    that the launch fails (`cudaGetLastError()` reports it), the kernel never runs, and an unchecked launch leaves
    the output as it was. Hopper allows up to 227 KB per block, but only after the opt-in.

    ## Known problems
    Only constant sizes are checked. The opt-in is looked for in the same file (or embedded source); one
    made in another translation unit, or through a function pointer the analysis cannot follow, is assumed to
    cover every kernel.

    ## Example
    ```cuda
    size_t smem = 64 * 1024;
    gemm<<<grid, block, smem>>>(a, b, c, n);
    ```

    ## Use instead
    ```cuda
    size_t smem = 64 * 1024;
    cudaFuncSetAttribute(gemm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    gemm<<<grid, block, smem>>>(a, b, c, n);
    ```

    ## Fix safety
    No automatic fix: where to raise the limit (once, before the first launch) is the program's choice, and
    the size must fit the target GPU.

    ## References
    - CUDA C++ Programming Guide, "Shared Memory" (compute capability 7.x and later)
    - CUDA Runtime API, `cudaFuncSetAttribute`
    """

    code = "CL404"
    name = "dynamic-shared-memory-without-opt-in"
    summary = "Launch with more than 48 KB of shared memory and no cudaFuncSetAttribute opt-in"
    depends_on = NO_FACTS  # launch sites as written
    default_severity = Severity.ERROR

    def check_unit(self, unit: FileContext) -> Iterator[Finding]:
        launches = [(launch, config) for launch, config in unit.launches()
                    if config.dynamic_shared_bytes and config.dynamic_shared_bytes > 0 and len(launch.config) > 2]
        if not launches:
            return
        allowed = opted_in(unit)
        for launch, config in launches:
            dynamic = config.dynamic_shared_bytes or 0
            kernel = unit.kernel(launch.kernel)
            static = static_shared_bytes(unit.unit, kernel)[0] if kernel is not None else 0
            total = dynamic + static
            with_static = f" + {static} B static" if static else ""
            if total > SHARED_MAX_PER_BLOCK:
                message = (f"`{launch.kernel}` is launched with {dynamic} B of dynamic shared memory{with_static}, "
                           f"over the {SHARED_MAX_PER_BLOCK} B (227 KB) any GPU gives one block: the launch fails")
            elif total > STATIC_SHARED_LIMIT and allowed is not None and launch.kernel not in allowed:
                message = (f"`{launch.kernel}` is launched with {dynamic} B of dynamic shared memory{with_static}, "
                           f"over {STATIC_SHARED_LIMIT} B (48 KB), and the file never raises its limit with "
                           f"cudaFuncSetAttribute(..., cudaFuncAttributeMaxDynamicSharedMemorySize, ...): "
                           "the launch fails and the kernel never runs")
            else:
                continue
            yield unit.finding(type(self), launch.config[2], message, kernel=launch.kernel,
                               evidence={"dynamic_shared_bytes": dynamic, "static_shared_bytes": static})
