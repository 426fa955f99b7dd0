"""The hardware limits launch configurations are checked against, and the constant `__launch_bounds__`."""

from __future__ import annotations

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.host_eval import eval_host
from cudalens.analysis.unit import Function, Unit

WARP_SIZE = 32
MAX_THREADS_PER_BLOCK = 1024
MAX_BLOCK_DIMS = (1024, 1024, 64)
STATIC_SHARED_LIMIT = 48 * 1024  # per block: static allocations, and all of it without the dynamic opt-in
SHARED_MAX_PER_BLOCK = 227 * 1024  # the most any GPU (sm_90, sm_100) gives one block, with the opt-in


def max_threads_bound(unit: Unit, function: Function) -> tuple[ts.Node, int] | None:
    """The `max_threads` argument of the kernel's `__launch_bounds__` and its value, when constant."""
    if not function.launch_bounds:
        return None
    node = function.launch_bounds[0]
    value = eval_host(node, unit, None)
    return (node, value[0]) if value is not None and len(value) == 1 else None


def threads(block: tuple[int, int, int]) -> int:
    return block[0] * block[1] * block[2]


def block_text(block: tuple[int, int, int]) -> str:
    """`256 threads`, or `16×16 = 256 threads` for a block of more than one dimension."""
    dims = list(block)
    while len(dims) > 1 and dims[-1] == 1:
        dims.pop()
    count = f"{threads(block)} threads"
    return count if len(dims) == 1 else "×".join(map(str, dims)) + " = " + count
