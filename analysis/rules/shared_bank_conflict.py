"""CL301: shared-memory accesses whose lanes collide in the same bank."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

from cudalens.analysis import ts_binding as ts
from cudalens.analysis.assumptions import ALL_FACTS
from cudalens.analysis.compiled_accesses import shared_instructions
from cudalens.analysis.findings import Finding, Fix, Severity
from cudalens.analysis.memory import worst_shared
from cudalens.analysis.model import FOLLOWS_DATA, KernelModel, RunConfig, inlined_from, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.simulate import SimResult


def _last_dimension(decl: ts.Node, name: str) -> ts.Node | None:
    """The size node of the last dimension of `name` in a declaration (`33` of `tile[32][33]`)."""
    for d in decl.children_by_field_name("declarator"):
        arr = d.child_by_field_name("declarator") if d.type == "init_declarator" else d
        if arr is not None and arr.type == "array_declarator" and ts.text(arr).startswith(name):
            inner = arr.child_by_field_name("declarator")
            if inner is not None and inner.type == "array_declarator":
                return arr.child_by_field_name("size")
    return None


def _only_subscripted(kernel: KernelModel, name: str, dims: int) -> bool:
    """Every use of the array is a full subscript: padding the rows cannot change what the code reads."""
    body = ts.text(kernel.function.body)
    uses = len(re.findall(rf"\b{re.escape(name)}\b", body))
    full = len(re.findall(rf"(?<![&\w]){re.escape(name)}\s*" + r"\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]\s*" * dims,
                          body))
    return uses == full  # the declaration is a full subscript too


def _outside(runs: list[SimResult], per_run: list[list]) -> bool:
    """Whether, in some run, no warp keeps these accesses inside the static shared array: the sampled sizes
    then are not the code's (its own indices stay inside the array), and the words the lanes hit say nothing
    of its banks (a `[4 * 4]` array of 16 words, 16 banks, cannot conflict at all). A warp inside is enough: an
    assumed block wider than the array's rows (256 threads over `t[32][32]`) still has its first warp right."""
    for run, accesses in zip(runs, per_run, strict=False):
        inside = outside = False
        for a in accesses:
            ptr = run.shared_arrays.get(a.base)
            if ptr is None or not ptr.dims or a.addr is None or ptr.alloc == "extern":
                return False
            limit = math.prod(ptr.dims) * ptr.elem.size
            for w in range(0, a.mask.size, 32):
                lanes = a.addr[w:w + 32][a.mask[w:w + 32]]
                if lanes.size:
                    past = bool(lanes.min() < 0 or lanes.max() + a.size > limit)
                    outside |= past
                    inside |= not past
        if outside and not inside:
            return True
    return False


def _lane_offsets(kernel: KernelModel, per_run: list[list]) -> list[tuple[int, ...] | None]:
    """Per run, where the first warp's lanes fall relative to its first lane in the site's first execution,
    for the runs whose first warp is the first run's threads (its block, or a 1-D block of another width);
    None for the others. Offsets that differ between such runs follow a tried size (`s[tx * n]`): the two
    samples (4096, 4352) are multiples of 256, so the degree both show is theirs, not the code's (an odd `n`
    has no conflict), and Premises.judge then names the size."""
    def offsets(accesses: list) -> tuple[int, ...] | None:
        a = next((x for x in accesses if x.addr is not None and x.mask[:32].any()), None)
        if a is None:
            return None
        lanes = a.addr[:32][a.mask[:32]]
        return tuple(int(v) for v in lanes - lanes[0])

    first = kernel.configs[0].block
    same = [c.block == first or (c.block[1:] == first[1:] == (1, 1) and min(c.block[0], first[0]) >= 32)
            for c in kernel.configs]
    mine = [offsets(accesses) if ok else None for accesses, ok in zip(per_run, same, strict=False)]
    return [m if m is not None else mine[0] for m in mine]


class SharedBankConflict(Rule):
    """## What it does
    Flags a shared-memory access where lanes of a warp hit the same one of the 32 banks in different 4-byte
    words, and gives the n-way degree: the request is replayed n times. Lanes reading the same word are a
    broadcast, not a conflict; 8- and 16-byte accesses are served in 2 and 4 phases and only conflict within a
    phase.

    ## Why is this bad?
    An n-way conflict divides the shared-memory bandwidth of that instruction by n. The classic case is a
    column read of a `[32][32]` float tile: all 32 lanes hit the same bank, 32 wavefronts instead of 1.

    ## Known problems
    Loops run for their first two iterations and, when the step scales the loop variable (`stride >>= 1`,
    `s *= 2`) with a uniform condition, for their last two as well: a bitonic sort's `2 * tid - (tid &
    (stride - 1))` and a radix-4 butterfly conflict only once `stride` drops under a warp. The iterations in
    between are not run. An integer parameter that is a size's exponent (`1 << log2N`) is sampled as 12 and
    11 when no launch fixes it, not as a size.
    A size no launch fixes that masks thread indices (`tid & (size - 1)`) or is compared with the warp's width
    is tried once more at 4 (an exponent at 2): a conflict only that run shows (scan's `2 * tid - (tid & (size
    - 1))` folds a warp onto every other word while `size` < 32) is `info`, "assuming size < 32 (tried: size =
    4)". A size in another role is not tried under a warp. Accesses through a `volatile` pointer are judged as
    written: nvcc neither merges neighbours nor serves a re-read from a register.
    A helper's reference parameter (`uint &keyA`) bound to a shared element is loaded where the helper reads
    it and stored where it assigns it, as nvcc's inlined code does; a value read again in the same loop body
    with no barrier between is taken to stay in a register. A `const` reference is read like a value, at the
    call. For a helper in a header the finding stays at the call, with the helper's expression as its related
    place (one finding per such expression).
    Lanes are simulated for the block shape found at the launch site (or the usual shapes); accesses whose
    index depends on loaded data are not judged; a line whose index follows loaded data in some executions (a
    binary search's probes, stores at the ranks it finds) is `info`, for the outcome the analysis followed.
    A conflict seen only where sampled sizes index past a static array is not reported: the code's own sizes
    keep its indices inside the array, and the sample says nothing of the banks they hit.
    A conflict whose lanes fall elsewhere when a size no launch fixes takes its other sample (`s[tx * n]`) is
    `info`, naming the size: both samples are multiples of 256, so the degree is theirs (an odd `n` has none).

    ## Example
    ```cuda
    __shared__ float tile[32][32];
    tile[threadIdx.y][threadIdx.x] = in[...];
    __syncthreads();
    out[...] = tile[threadIdx.x][threadIdx.y];   // 32-way conflict
    ```

    ## Use instead
    Pad the rows so a column walks across banks:
    ```cuda
    __shared__ float tile[32][33];
    ```

    ## Fix safety
    The padding fix is safe when the array is only ever used through full subscripts (`tile[i][j]`): it then
    changes the layout, not the values. When the array's address is taken or it is indexed through a pointer,
    the fix is offered as unsafe.

    ## References
    - CUDA C++ Programming Guide, "Shared Memory" (compute capability 5.x and later)
    - Nsight Compute, "Shared Memory Bank Conflicts" (l1tex__data_bank_conflicts_pipe_lsu_mem_shared)
    """

    code = "CL301"
    name = "shared-bank-conflict"
    summary = "n-way shared-memory bank conflict"
    depends_on = ALL_FACTS  # the warp shape and the words its lanes touch
    fixable = True

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        fixes: dict[str, Fix | None] = {}
        data_sites = {a.site for run in kernel.runs for a in run.accesses
                      if a.space == "shared" and a.addr is None}
        found = sites(kernel, shared_instructions)
        for key, per_run in found.items():
            requests = [worst_shared(run) for run in per_run]
            if requests[0] is None or not requests[0].conflicted or _outside(kernel.runs, per_run):
                continue
            holds = [q is not None and q.conflicted for q in requests]
            yield self.conflict(kernel, per_run, requests, holds, key in data_sites, fixes, kernel.configs[0],
                                [q and (q.degree, q.wavefronts, q.ideal, lanes)
                                 for q, lanes in zip(requests, _lane_offsets(kernel, per_run), strict=True)])
        small = kernel.small_size_run() if found else None
        if small is None:
            return
        # a conflict no sampled size shows, seen once the sizes whose role calls for it are under a warp
        small_fixes: dict[str, Fix | None] = {}
        for key, (accesses,) in sites(kernel, shared_instructions, runs=[small]).items():
            request = worst_shared(accesses)
            if request is None or not request.conflicted or _outside([small], [accesses]) or \
                    any(q is not None and q.conflicted for q in map(worst_shared, found.get(key, ()))):
                continue
            yield self.conflict(kernel, [accesses], [request], [False] * len(kernel.runs) + [True],
                                key in data_sites, small_fixes, kernel.small_config)  # type: ignore[arg-type]

    def conflict(self, kernel: KernelModel, per_run: list[list], requests: list, holds: list[bool],
                 data_site: bool, fixes: dict[str, Fix | None], config: RunConfig,
                 stated: list[object] | None = None) -> Finding:
        """The finding for one site, from its accesses in the runs that judged it (the first one's numbers;
        `stated`: each run's, which must agree for the numbers to be the code's)."""
        a = per_run[0][0]
        r = requests[0]
        if a.base not in fixes:
            fixes[a.base] = self.padding_fix(kernel, a, config)
        # a line whose later executions take their index from loaded data (a binary search's probe):
        # the conflict seen in the first ones is not the line's
        data_dependent = data_site or any(x.sampled for run in per_run for x in run)
        proven = all(holds) and not data_dependent
        kind = "write to" if a.write else "read of"
        message = (f"{r.degree}-way bank conflict on {kind} shared `{a.base}`: lanes of a warp hit the same "
                   f"bank in different words, so the request takes {r.wavefronts} wavefronts instead of "
                   f"{r.ideal}")
        fix = fixes[a.base]
        if data_dependent:
            message += f" ({FOLLOWS_DATA})"
        if fix is not None:
            message += f"; {fix.message[0].lower()}{fix.message[1:]}"
        related = (((a.decl, f"`{a.base}` is declared here"),) if a.decl is not None else ()) + inlined_from(a)
        return kernel.finding(type(self), a.node, message, Severity.WARNING if proven else Severity.INFO,
                              fix=fix, related=related, holds=holds, stated=stated or (), evidence={
                                  "n_way": r.degree, "wavefronts": r.wavefronts, "ideal_wavefronts": r.ideal,
                                  "element_bytes": a.size})

    def padding_fix(self, kernel: KernelModel, access, config: RunConfig) -> Fix | None:
        """Padding the rows of a 2-D array by the fewest elements that leave its accesses conflict-free in
        `config`'s run (the one whose conflict the finding reports)."""
        ptr = kernel.primary.shared_arrays.get(access.base)
        if ptr is None or len(ptr.dims) < 2 or access.decl is None:
            return None
        size_node = _last_dimension(access.decl, access.base)
        if size_node is None:
            return None
        for pad in (1, 2, 4):
            padded = kernel.simulate(config, pad={access.base: pad})
            worst = [worst_shared([a]) for a in shared_instructions(padded) if a.base == access.base]
            if all(r is None or not r.conflicted for r in worst):
                break
        else:
            return None
        old = ts.text(size_node)
        new = str(int(old) + pad) if old.isdigit() else f"{old} + {pad}"
        safe = _only_subscripted(kernel, access.base, len(ptr.dims))
        return kernel.replace_fix(size_node, new, f"Pad the rows: `{access.base}[...][{new}]`", safe)
