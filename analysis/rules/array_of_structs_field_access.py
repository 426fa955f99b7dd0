"""CL102: reading one field of an array of structs, so lanes are a struct apart."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.compiled_accesses import global_instructions
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import FOLLOWS_DATA, KernelModel, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.rules.uncoalesced_global_access import is_uncoalesced, worst_request


def whole_vector_access(run, access) -> bool:
    """Whether the thread also reads (for a store: writes) every other field of the same 8- or 16-byte element:
    nvcc loads such an element whole (LDG.64/LDG.128: BlackScholes' `d_StockPrice[opt].x` then `.y`), and
    stores it whole when the field stores come one after another with no other global store between (STG.64:
    kaolin's `nuggets[t].x = t; nuggets[t].y = 0;`), which is ideal."""
    size = access.struct_size
    if size not in (8, 16):
        return False
    lanes = access.mask
    elements = access.addr[lanes] // size
    covered = np.zeros(size, bool)
    stores: list[int] = []  # positions in the run of the element's field stores
    for at, other in enumerate(run.accesses):
        if other.base != access.base or other.struct_size != size or other.write != access.write \
                or other.addr is None or not np.array_equal(other.mask, lanes) \
                or not np.array_equal(other.addr[lanes] // size, elements):
            continue
        offsets = np.unique(other.addr[lanes] % size)
        if offsets.size == 1:
            covered[offsets[0]:offsets[0] + other.size] = True
            stores.append(at)
    if not covered.all():
        return False
    if not access.write:
        return True
    between = run.accesses[min(stores):max(stores) + 1]
    return sum(a.space == "global" and (a.write or a.atomic) for a in between) == len(stores)


class ArrayOfStructsFieldAccess(Rule):
    """## What it does
    Flags a global access to one field of an array of structs (`points[i].x`) where consecutive lanes read
    consecutive structs, so each lane's field is a whole struct away from its neighbour's.

    ## Why is this bad?
    The warp moves only the bytes of one field but pays for the sectors of whole structs: with a 24-byte
    struct and a 4-byte field, 6× the traffic of a structure-of-arrays layout.

    ## Known problems
    The struct layout is computed from the declarations the file sees (its headers included, `alignas` and
    `__align__` too); packed structs are not modelled. An 8- or 16-byte element whose every field the thread
    reads (`p[i].x` and `p[i].y` of a `float2`) is not reported: nvcc loads it whole, one vector load; nor is
    one whose every field it stores, one store after another (`q[i].x = a; q[i].y = b;` of a `uint2`): nvcc
    stores it whole (fixture CL1_whole_vector_stores.cu).

    ## Example
    ```cuda
    struct Particle { float x, y, z, mass; };
    __global__ void k(const Particle* p, float* out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) out[i] = p[i].x;   // 16 bytes between lanes
    }
    ```

    ## Use instead
    A structure of arrays (`float* x, *y, *z, *mass`), or load whole structs as vectors (`float4`) and use
    all fields.

    ## Fix safety
    No automatic fix: the data layout is shared with the host code.

    ## References
    - CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"
    """

    code = "CL102"
    name = "array-of-structs-field-access"
    summary = "Field read from an array of structs: lanes are a struct apart"
    depends_on = ALL_FACTS  # which lanes read which struct

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        def keep(a) -> bool:
            return a.space == "global" and not a.atomic and a.addr is not None and a.struct_size is not None

        for per_run in sites(kernel, global_instructions, keep).values():
            requests = [worst_request(run) for run in per_run]
            if not all(is_uncoalesced(r) for r in requests):
                continue
            first = next(a for run in per_run for a in run)
            if whole_vector_access(kernel.primary, first):
                continue
            r = requests[0]
            assert r is not None
            sampled = any(a.sampled for run in per_run for a in run)
            yield kernel.finding(
                type(self), first.node,
                f"`{first.field_name}` is {'written to' if first.write else 'read from'} an array of "
                f"{first.struct_size}-byte structs: a warp request "
                f"touches {r.sectors} sectors to use {first.size} bytes per lane (ideal {r.ideal}); "
                f"a structure of arrays would coalesce" + (f" ({FOLLOWS_DATA})" if sampled else ""),
                Severity.INFO if sampled else Severity.WARNING, holds=[is_uncoalesced(r) for r in requests],
                stated=[q and (q.sectors, q.ideal) for q in requests],
                evidence={"sectors_per_request": r.sectors, "ideal_sectors": r.ideal,
                          "struct_bytes": first.struct_size, "field_bytes": first.size},
            )
