"""CL102: reading one field of an array of structs, so lanes are a struct apart."""

from __future__ import annotations

from collections.abc import Iterator

from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.model import KernelModel, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.rules.uncoalesced_global_access import is_uncoalesced, worst_request


class ArrayOfStructsFieldAccess(Rule):
    """## What it does
    Flags a global access to one field of an array of structs (`points[i].x`) where consecutive lanes read
    consecutive structs, so each lane's field is a whole struct away from its neighbour's.

    ## Why is this bad?
    The warp moves only the bytes of one field but pays for the sectors of whole structs: with a 24-byte
    struct and a 4-byte field, 6× the traffic of a structure-of-arrays layout.

    ## Known problems
    The struct layout is computed from the declaration in the file; structs from headers that are not
    visible, packed structs and explicit alignment attributes are not modelled.

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

        for per_run in sites(kernel, "accesses", keep).values():
            requests = [worst_request(run) for run in per_run]
            if not all(is_uncoalesced(r) for r in requests):
                continue
            first = next(a for run in per_run for a in run)
            r = requests[0]
            assert r is not None
            yield kernel.finding(
                type(self), first.node,
                f"`{first.field_name}` is read from an array of {first.struct_size}-byte structs: a warp request "
                f"touches {r.sectors} sectors to use {first.size} bytes per lane (ideal {r.ideal}); "
                f"a structure of arrays would coalesce",
                Severity.WARNING, holds=[is_uncoalesced(r) for r in requests],
                evidence={"sectors_per_request": r.sectors, "ideal_sectors": r.ideal,
                          "struct_bytes": first.struct_size, "field_bytes": first.size},
            )
