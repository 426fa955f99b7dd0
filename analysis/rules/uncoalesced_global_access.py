"""CL101: global loads and stores whose lanes are not neighbours in memory."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import combinations

from cudalens.analysis.assumptions import ALL_FACTS, Fact
from cudalens.analysis.compiled_accesses import global_instructions, hoisted_before_loop
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.memory import GlobalRequest, worst_global
from cudalens.analysis.model import FOLLOWS_DATA, KernelModel, inlined_from, sites
from cudalens.analysis.rule_base import Rule
from cudalens.analysis.values import STAND_IN

MIN_EXCESS = 2.0  # at least twice the sectors that contiguous lanes would need


def worst_request(accesses: list) -> GlobalRequest | None:
    return worst_global(accesses)


def is_uncoalesced(r: GlobalRequest | None) -> bool:
    return r is not None and r.excess_ratio >= MIN_EXCESS and r.sectors > 4


NARROWEST = 2  # bytes: the narrowest element a dtype dispatch instantiates (half, bfloat16)


def holds_when_narrow(run: list) -> bool:
    """Whether a site whose element type was not read (taken as a 4-byte float) is uncoalesced with 2-byte
    elements too: the byte offsets of `p[i]` scale with the element, so the pattern, not the float, proves it."""
    narrow = [replace(a, addr=a.addr * NARROWEST // a.size, size=max(1, a.size * NARROWEST // 4))
              for a in run if a.addr is not None]
    return is_uncoalesced(worst_request(narrow)) if narrow else False


@dataclass(frozen=True)
class Stride:
    """How far apart consecutive lanes are, as the message says it (`text`), and whether a run-time value the
    code does not fix sets it (`names`: the parameters it is an expression of; `run_time` also for a loaded
    value): the sectors a request touches are then the sampled values', never stated as fact."""

    text: str
    run_time: bool = False
    names: tuple[str, ...] = ()
    alone: bool = False  # the stride is one parameter's value (`ld`, or one of `ld` or `n`): 1 when that one is

    def sectors(self, r: GlobalRequest, size: int) -> str:
        """The sectors a warp request touches: the count where the code fixes the stride, else what holds for
        every stride: at most the count of the sampled sizes, which are large (4096: the lanes as far apart as
        they get), or, for a loaded value's stride, one sector per lane (per 32 bytes of an element)."""
        if not self.run_time:
            return f"{r.sectors} sectors"
        return f"up to {r.sectors if self.names else max(r.sectors, r.lanes * -(-size // 32))} sectors"

    def unless_one(self, unproven: set[str]) -> str:
        """The one value that coalesces the lanes, when the stride is a parameter the code never bounds (so it
        may be 1), or one of several such (`stride_d` or `stride_h`: the runs could not tell which)."""
        if not self.alone or not set(self.names) <= unproven:
            return ""
        return f" unless {f'`{self.names[0]}`' if len(self.names) == 1 else 'the stride'} is 1, which the code allows"


def _stride_text(requests: list[GlobalRequest | None], kernel: KernelModel, size: int,
                 deps: frozenset[str], follows_data: bool, unknown_size: bool = False) -> Stride:
    """How far apart consecutive lanes are, in the program's terms: `C` elements, `T + 1` elements,
    `NH × T` elements, a run-time stride of named parameters, or what the groups of lanes look like. A stride
    that rests on sampled parameter values is never printed as a number."""
    index, r = next((i, q) for i, q in enumerate(requests) if is_uncoalesced(q))
    assert r is not None
    params = sorted(d.split(":", 1)[1] for d in deps if d.startswith("param:"))
    if r.stride_bytes is None or r.stride_bytes % size:
        if r.groups is not None and r.groups[0] % size == 0:
            step, lanes = r.groups
            if step == size:
                return Stride(f"contiguous only in groups of {lanes} lanes")
            apart = _apart(requests, kernel, index, size, params, follows_data,
                           lambda q: q.groups[0] if q.groups else None)
            within = f" within each group of {lanes} lanes"
            return replace(apart, text=apart.text + within, alone=False) if apart else \
                Stride(f"{step // size} elements apart{within}")
        return Stride("at irregular offsets")
    apart = _apart(requests, kernel, index, size, params, follows_data, lambda q: q.stride_bytes)
    if apart is None and loaded_stride(deps, params):
        return Stride(LOADED_STRIDE, run_time=True)
    if apart is None and unknown_size:
        return Stride(f"{r.stride_bytes // size} elements apart")  # the bytes would be a float's, not the program's
    return apart or Stride(f"{r.stride_bytes // size} elements ({r.stride_bytes} B) apart")


LOADED_STRIDE = "a run-time stride apart (a value the kernel loads sets it, as `nb[1] / sizeof(float)` would)"


def loaded_stride(deps: frozenset[str], params: list[str]) -> bool:
    """Whether the lanes' stride may be a loaded value's (a stand-in's, values.STAND_IN), with no parameter to
    name: the sampled number is the stand-in's, not the program's, and is never printed."""
    return STAND_IN in deps and not params


def _apart(requests: list[GlobalRequest | None], kernel: KernelModel, index: int, size: int, params: list[str],
           follows_data: bool, stride_of: Callable[[GlobalRequest], int | None]) -> Stride | None:
    """The stride in the parameters it follows across the runs of one block (`C`, `T + 1`, `NH × T` elements
    apart, or a run-time stride of them); None when it is the same in every run and no loaded value sets it
    (the number is then the program's, not a sampled size's or a stand-in's). A parameter a launch fixes at 0
    or 1 is no stride's name: it made a stride of 3 read `gaussian_offset + 3`."""
    fixed = dict(kernel.configs[index].params)
    params = [p for p in params if _sampled(kernel, [p]) or fixed.get(p) not in (0, 1)]
    if not params:
        return None
    block = kernel.configs[index].block
    samples = []  # (the parameters' values in a run of this block, the stride in elements there)
    for cfg, q in zip(kernel.configs, requests, strict=True):
        values = dict(cfg.params)
        stride = stride_of(q) if q is not None else None
        if cfg.block == block and stride is not None and stride % size == 0 and all(p in values for p in params):
            samples.append(([values[p] for p in params], abs(stride // size)))
    for offset in range(-8, 9):
        shift = f" + {offset}" if offset > 0 else f" - {-offset}" if offset < 0 else ""
        # one parameter sets it (`C`, `T + 1`); when the runs cannot tell which, both are named
        alone = [p for i, p in enumerate(params) if samples and all(e == v[i] + offset for v, e in samples)]
        if alone:
            return _named(kernel, f"{' or '.join(f'`{p}{shift}`' for p in alone)} elements apart", alone,
                          alone=not offset)
        if len(params) > 1 and samples and all(e == math.prod(v) + offset for v, e in samples):
            return _named(kernel, f"`{' × '.join(params)}{shift}` elements apart", params)  # `NH × T`
    # every run, whatever its block: the parameters took other values and the stride stayed, so it is not theirs
    # (`weight[idx[blockIdx.x] * emb_size + 4 * threadIdx.x]`); a loaded value the index follows may still set it
    strides = {stride_of(q) for q in requests if q is not None}
    values = {tuple(dict(cfg.params).get(p) for p in params) for cfg in kernel.configs}
    # the same in the runs of this block — when there are two (one run of a block cannot tell a sampled size's
    # stride from the program's: `(c * H + h) * W` put lanes 16777216 elements apart at H = W = 4096)
    if len({e for _, e in samples}) == 1 and not follows_data and (
            len(samples) > 1 or (len(strides) == 1 and len(values) > 1) or not _sampled(kernel, params)):
        return None
    if follows_data and len(strides) == 1 and None not in strides and len(values) > 1:
        return Stride("a run-time stride apart (the loaded value the index follows may set it)", run_time=True)
    return Stride(f"a run-time stride apart (it depends on {', '.join(f'`{p}`' for p in params)})",
                  run_time=True, names=tuple(params))


def _named(kernel: KernelModel, text: str, names: list[str], alone: bool = False) -> Stride:
    """A stride the message gives as an expression of these parameters: a run-time one where some of them
    were sampled, the program's own where the launches fix them all."""
    return Stride(text, run_time=_sampled(kernel, names), names=tuple(names), alone=alone)


def _sampled(kernel: KernelModel, params: list[str]) -> bool:
    """Whether some of these parameters were sampled (not fixed by a launch or a directive)."""
    premises = kernel.context.premises
    return premises is None or any(a.fact is Fact.SIZES and a.name in params for a in premises.assumptions)


def _one_size(kernel: KernelModel, group: list[list], requests: list[GlobalRequest | None], size: int,
              cache: dict) -> str | None:
    """The run-time size that alone is the lanes' stride (`pix_to_face[pix * K + k]`: `K` elements), told
    apart from the others by a run that gives each sampled size its own value (the runs give them all one
    value, and the message named `H` or `K` or `W`); None when the stride is not one sampled size."""
    index = next(i for i, q in enumerate(requests) if is_uncoalesced(q))
    r, first, cfg = requests[index], group[index][0], kernel.configs[index]
    premises = kernel.context.premises
    sampled = {a.name for a in premises.assumptions if a.fact is Fact.SIZES} if premises is not None else set()
    params = sorted(d[6:] for d in first.deps if d.startswith("param:") and d[6:] in sampled)
    values = dict(cfg.params)
    if r is None or r.stride_bytes is None or r.stride_bytes % size or \
            not any(abs(r.stride_bytes // size) == values.get(p) for p in params):
        return None
    apart = {p: values[p] + 96 * (j + 1) for j, p in enumerate(sorted(sampled))}
    q = _request_with(kernel, index, first, apart, cache)
    if q is None or q.stride_bytes is None or q.stride_bytes % size:
        return None
    hits = [p for p in params if apart[p] == abs(q.stride_bytes // size)]
    return hits[0] if len(hits) == 1 else None


MAX_AT_ONE = 2  # parameters tried at 1 in every combination (3 more runs at most); with more, the finding is info


def _holds_at_one(kernel: KernelModel, group: list[list], requests: list[GlobalRequest | None],
                  names: set[str], cache: dict) -> bool:
    """Whether the lanes stay uncoalesced with these parameters at 1, the value that coalesces a stride that
    is one of them (`grad_bary[(pix * K + k) * 3 + j]`: 3 elements apart at `K` = 1), each alone and together
    (`C[bid * m * n + j * m + i]` coalesces at `m` = 1 alone, not with `threads_per_bid` = 1 too), so that the
    finding holds for every value of them and rests on none."""
    if len(names) > MAX_AT_ONE:
        return False
    index = next(i for i, q in enumerate(requests) if is_uncoalesced(q))
    return all(is_uncoalesced(_request_with(kernel, index, group[index][0], dict.fromkeys(ones, 1), cache))
               for n in range(1, len(names) + 1) for ones in combinations(sorted(names), n))


def _request_with(kernel: KernelModel, index: int, access, params: dict[str, int],
                  cache: dict) -> GlobalRequest | None:
    """The worst request of `access`'s site (its array, its direction) in the run of configuration `index`
    with these parameters given other values; each such run made once per kernel (`cache`)."""
    cfg = kernel.configs[index]
    values = tuple(sorted({**dict(cfg.params), **params}.items()))
    run = cache.get((index, values))
    if run is None:
        run = cache[index, values] = kernel.simulate(replace(cfg, params=values))
    key = (access.site, access.alloc or access.base, access.write)
    return worst_request([a for a in global_instructions(run) if (a.site, a.alloc or a.base, a.write) == key])


def _config_text(kernel: KernelModel, flagged: list[bool]) -> str:
    """Which of the simulated configurations show the pattern, in words (the block, or the sampled sizes)."""
    def label(cfg) -> str:
        if cfg.block != kernel.configs[0].block:
            return f"a {'×'.join(map(str, cfg.block))} block"
        where = "" if cfg.block_index == kernel.configs[0].block_index else \
            f" in the block at blockIdx ({', '.join(map(str, cfg.block_index))})"
        return f"integer parameters of {cfg.param_sample}{where}"

    seen = [label(c) for c, f in zip(kernel.configs, flagged, strict=True) if f]
    not_seen = [label(c) for c, f in zip(kernel.configs, flagged, strict=True) if not f]
    return f"seen with {', '.join(seen)}, not with {', '.join(not_seen)}: it depends on the run-time values"


def _global_sites(kernel: KernelModel) -> list[tuple[list[list], list[GlobalRequest | None]]]:
    def keep(a) -> bool:
        return a.space == "global" and not a.atomic and a.addr is not None and a.struct_size is None

    out = []
    for per_run in sites(kernel, global_instructions, keep).values():
        # the call of a header's helper is the site of every access inside it (and a helper's line, of every
        # call's): one site per array and direction, so that a finding names the array whose access it judged
        arrays: dict[tuple[str, bool], list[list]] = {}
        for i, run in enumerate(per_run):
            for a in run:
                arrays.setdefault((a.alloc or a.base, a.write), [[] for _ in per_run])[i].append(a)
        out += [(group, [worst_request(run) for run in group]) for group in arrays.values()]
    return out


_PLANE = frozenset(("tid.x", "tid.y"))


def fast_axis(access, block: tuple[int, int, int]) -> str | None:
    """Which thread index moves the address least ("x" or "y"), from the addresses of thread (0,0), its
    neighbour in x and its neighbour in y; None where one of them is inactive or the block is flat."""
    bx, by, _ = block
    if access.addr is None or bx < 2 or by < 2 or len(access.mask) <= bx:
        return None
    if not (access.mask[0] and access.mask[1] and access.mask[bx]):
        return None
    dx, dy = abs(int(access.addr[1] - access.addr[0])), abs(int(access.addr[bx] - access.addr[0]))
    return None if dx == dy else "x" if dx < dy else "y"


def transpose_partner(kernel: KernelModel, access) -> object | None:
    """A coalesced global access of the same kernel that uses the same two thread indices the other way round
    (the index that moves the one address least moves the other most): the signature of a transpose, whose fix
    is staging a tile through shared memory. A thread writing its own contiguous chunk (`out[(y * w + x) * 4 +
    c]` beside `in[y * w + x]`) has the same fast index on both sides: strided, not a transpose."""
    if not _PLANE <= access.deps:
        return None
    block = kernel.configs[0].block
    axis = fast_axis(access, block)
    for per_run, requests in _global_sites(kernel):
        other = next((a for run in per_run for a in run), None)
        if other is None or other.node == access.node or not _PLANE <= other.deps:
            continue
        if requests[0] is None or is_uncoalesced(requests[0]) or other.write == access.write:
            continue
        other_axis = fast_axis(other, block)
        if axis is None or other_axis is None or axis != other_axis:
            return other
    return None


class UncoalescedGlobalAccess(Rule):
    """## What it does
    Flags a global-memory load or store where consecutive lanes of a warp do not access consecutive
    elements, so one warp instruction touches more 32-byte sectors than the data it moves needs. The message
    gives the stride between lanes and the sectors per request against the ideal. Where a run-time value
    sets the stride (`C` elements apart, `o_stride_d` elements apart), the sectors are a sample's, so the
    message gives what holds for every value: "up to 32 sectors" (one per lane), and, when the stride is a
    parameter the code never bounds, the value that coalesces ("unless `o_stride_d` is 1, which the code
    allows": a contiguous last dimension). A stride the code or its launch fixes is a number, and so is the
    sector count.

    ## Why is this bad?
    Global memory is served in 32-byte sectors. When the 32 lanes of a warp read 32 neighbouring floats, the
    request needs 4 sectors; when they are 2 elements apart it needs 8, and when they are a row apart it needs
    32 — up to 8× the memory traffic for the same work. Memory-bound kernels slow down by the same factor.

    ## Known problems
    Lanes are simulated for the block shape found at the launch site (or, when none is visible, for the usual
    shapes); integer parameters are sampled, except one the host tests before the launch (`if (C <= 4)`
    around it), which takes the largest value the test lets through and is named as assumed (fixture
    CL1_launch_guard.cu). When the stride depends on a run-time value that is never compared against an index
    (so it may be 1), the finding is `info` (fixture CL1_sampled_strides.cu: apex's fused RoPE) — unless the
    lanes stay uncoalesced with that value at 1 (each such value alone and together, two at most): a stride of
    3 × `spacing` is 3 at the least, and the warning says "for every `spacing`, 1 included".
    When the element type is not read (a launch's `c_type`/`scalar_t` from a dtype dispatch, and `(half2*)&p[i]`
    of such a `p`), the elements are counted as 4-byte floats: the stride is given in elements, without bytes,
    and the sector figures say they are a float's. The finding stays a `warning` when the pattern alone proves
    it — lanes still uncoalesced with 2-byte elements (half, bf16), such as 8 elements apart — and is `info`
    otherwise (2 elements apart: 4 B with halves, coalesced) (fixture CL1_unread_element_type.cu).
    The finding stays on the access; where nvcc puts its instructions elsewhere, a related place says so: a
    load whose pointer and index do not change in a loop that stores nothing and calls nothing is hoisted
    before the loop (`att_bth[t3]` in a loop over `t2`: Nsight Compute counts its sectors on the `for` line);
    an access in a helper of the file names the kernel's call it came from; one in a header's helper is shown
    at the call, with the helper's expression. A load nvcc never issues is not reported: an element the same
    thread read earlier in the loop body with no store between (`mat3(c[0], c[1], c[2], c[1], …)`: the second
    `c[1]` is a register), or stored through the same pointer while its other stores there were a fixed distance
    away (`c[0] = …; c[1] = …; x = c[0];`); a store through another pointer, which may alias it, makes it a load
    again (fixture CL1_values_in_registers.cu, checked against the PTX). A local array that a list of names and
    literals initialises and nothing writes after is a table of values, kept in registers: its element at a
    compile-time index is that value (`x * stride[2]` of `int stride[] = {dim, dim * heads, 1}` is `x`, no
    stride a load sets), and a `constexpr` table's elements are compile-time constants (fixture
    CL1_local_tables.cu; the PTX has no local memory).

    ## Example
    ```cuda
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    int y = blockIdx.y * blockDim.y + threadIdx.y;
    out[x * height + y] = in[y * width + x];   // the store: lanes are `height` floats apart
    ```

    ## Use instead
    Make `threadIdx.x` the fastest-varying index of every access, or stage the tile through shared memory:
    ```cuda
    tile[threadIdx.y][threadIdx.x] = in[y * width + x];
    __syncthreads();
    out[(bx + threadIdx.y) * height + by + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
    ```

    ## Fix safety
    No automatic fix: reordering indices changes which thread computes what.

    ## References
    - CUDA C++ Best Practices Guide, "Coalesced Access to Global Memory"
    - Nsight Compute, "L1TEX Global Load/Store Access Pattern" rule (sectors per request)
    """

    code = "CL101"
    name = "uncoalesced-global-access"
    summary = "Global access whose lanes are not consecutive elements (more sectors per request)"
    depends_on = ALL_FACTS  # the warp shape, element sizes and strides

    def check(self, kernel: KernelModel) -> Iterator[Finding]:
        apart_runs: dict = {}  # the runs with other parameter values (_request_with), each made once
        for per_run, requests in _global_sites(kernel):
            flagged = [is_uncoalesced(r) for r in requests]
            if not flagged[0] and not any(flagged):
                continue
            first = next(a for run in per_run for a in run)
            if (transpose_partner(kernel, first) is not None) != (self.code == "CL103"):
                continue  # a transpose is reported as CL103, which names the fix; anything else as CL101
            seen = next(i for i, f in enumerate(flagged) if f)
            r = requests[seen]
            assert r is not None
            runtime = first.deps and {d for d in first.deps if d.startswith("param:")}
            unproven_params = {d.split(":", 1)[1] for d in (runtime or ())} - kernel.dimension_params
            follows_data = any(a.sampled for run in per_run for a in run)
            stride = _stride_text(requests, kernel, first.size, first.deps, follows_data, first.assumed_size)
            one = None if follows_data else _one_size(kernel, per_run, requests, first.size, apart_runs)
            if one is not None:
                stride = Stride(f"`{one}` elements apart", run_time=True, names=(one,), alone=True)
            kind = "store to" if first.write else "load from"
            # with the element type not read, a stride of 1 is one element of a type that may be wider than
            # the access (a `glm::vec3` read by component): which value coalesces is not known
            unless = "" if first.assumed_size else stride.unless_one(unproven_params)
            message = self.describe(kernel, first, kind, stride.text, r, stride.sectors(r, first.size), unless)
            severity = Severity.WARNING
            if first.assumed_size:  # the element type is not read (a dispatch's `c_type`): float is assumed
                narrow = all(holds_when_narrow(run) for run, f in zip(per_run, flagged, strict=True) if f)
                message += (f" (counted with 4-byte elements: the element type of `{first.base}` is not read"
                            + ("" if narrow else ", and with 2-byte ones the lanes would be close enough") + ")")
                if not narrow:
                    severity = Severity.INFO
            if follows_data:
                severity = Severity.INFO
                message += f" ({FOLLOWS_DATA})"
            elif not all(flagged):
                severity = Severity.INFO
                message += f" ({_config_text(kernel, flagged)})"
            elif unproven_params and _holds_at_one(kernel, per_run, requests, unproven_params, apart_runs):
                message += f" (for every {' and '.join(f'`{p}`' for p in sorted(unproven_params))}, 1 included)"
            elif unproven_params:
                severity = Severity.INFO
                if not unless:  # which value would coalesce the lanes says what the run time decides
                    message += f" (the stride depends on {', '.join(sorted(unproven_params))} at run time)"
            hoisted = hoisted_before_loop(first, kernel.function.body)
            moved = ((hoisted, "loop-invariant: nvcc loads it once, before this loop"),) if hoisted else ()
            yield kernel.finding(type(self), first.node, message, severity,
                                 related=self.related(kernel, first) + inlined_from(first) + moved,
                                 holds=flagged, stated=[q and (q.sectors, q.ideal) for q in requests], evidence={
                "sectors_per_request": r.sectors, "ideal_sectors": r.ideal,
                "stride_bytes": r.stride_bytes or 0, "element_bytes": first.size,
                "block": "×".join(map(str, kernel.configs[seen].block)),  # the run that shows it
            } | ({"element_type_read": False} if first.assumed_size else {}))

    def describe(self, kernel: KernelModel, access, kind: str, stride: str, r: GlobalRequest, sectors: str,
                 unless: str) -> str:
        return (f"Uncoalesced global {kind} `{access.base}`: consecutive lanes are {stride}, so a warp request "
                f"touches {sectors} where {r.ideal} would do{unless}")

    def related(self, kernel: KernelModel, access) -> tuple:
        return ()
