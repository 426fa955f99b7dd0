"""CL103: a transpose done straight through global memory, where one side cannot coalesce."""

from __future__ import annotations

from cudalens.analysis.memory import GlobalRequest
from cudalens.analysis.model import KernelModel
from cudalens.analysis.rules.uncoalesced_global_access import UncoalescedGlobalAccess, transpose_partner


class TransposeWithoutSharedStaging(UncoalescedGlobalAccess):
    """## What it does
    Flags a kernel that reads with `threadIdx.x` on the fast dimension and writes with it on the slow one (or
    the other way round) — a transpose, permute or layout change — so one of the two sides is uncoalesced
    whatever the thread mapping.

    ## Why is this bad?
    No choice of indices makes both a row-major read and a column-major write coalesce: the uncoalesced side
    moves up to 8× the bytes it needs. Staging a tile through shared memory lets both global sides coalesce;
    the transpose then happens in shared memory, where a padded tile has no bank conflicts.

    ## Known problems
    Needs both `threadIdx.x` and `threadIdx.y` in the indices, swapping roles between the two sides: 1-D
    kernels that walk rows per thread, and 2-D kernels where each thread reads or writes its own contiguous
    chunk (`out[(y * width + x) * 4 + c]`, the same fast index on both sides), are reported as CL101 instead.

    ## Example
    ```cuda
    out[x * height + y] = in[y * width + x];
    ```

    ## Use instead
    ```cuda
    __shared__ float tile[32][33];
    tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    out[(blockIdx.x * 32 + threadIdx.y) * height + blockIdx.y * 32 + threadIdx.x] =
        tile[threadIdx.x][threadIdx.y];
    ```

    ## Fix safety
    No automatic fix: the kernel's structure changes (tile, barrier, new indices).

    ## References
    - NVIDIA Developer Blog, "An Efficient Matrix Transpose in CUDA C/C++"
    - CUDA C++ Best Practices Guide, "Shared Memory in Matrix Multiplication"
    """

    code = "CL103"
    name = "transpose-without-shared-staging"
    summary = "Transpose through global memory: stage a tile in shared memory so both sides coalesce"

    def describe(self, kernel: KernelModel, access, kind: str, stride: str, r: GlobalRequest, sectors: str,
                 unless: str) -> str:
        partner = transpose_partner(kernel, access)
        assert partner is not None
        other = "read" if not partner.write else "written"
        return (f"Transpose through global memory: `{partner.base}` is {other} coalesced but the {kind} "
                f"`{access.base}` has lanes {stride} ({sectors} per request, {r.ideal} ideal{unless}); stage a "
                f"tile through shared memory so both sides coalesce")

    def related(self, kernel: KernelModel, access) -> tuple:
        partner = transpose_partner(kernel, access)
        return ((partner.node, f"the coalesced side: `{kernel.text(partner.node)}`"),) if partner else ()
