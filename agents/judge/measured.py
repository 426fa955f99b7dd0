"""Verdicts for correct kernels with Nsight Compute metrics: the bottleneck, then one method aimed at it."""

from __future__ import annotations

from dataclasses import replace

from cudalens.agents.evaluation import known_speedup
from cudalens.agents.judge.inputs import JudgeInput
from cudalens.agents.judge.methods import METHODS
from cudalens.agents.judge.metrics import Derived, derive, hottest_line
from cudalens.agents.judge.roofline import Roofline, roofline
from cudalens.agents.judge.verdict import Bottleneck, Evidence, Verdict
from cudalens.analysis.rules.single_address_global_atomic import SingleAddressGlobalAtomic
from cudalens.profiler.ncu.metrics import (
    ACHIEVED_OCCUPANCY,
    DRAM_THROUGHPUT,
    DURATION,
    GRID_SIZE,
    L1_HIT_RATE,
    MEMORY_THROUGHPUT,
    REGISTERS,
    SM_THROUGHPUT,
    TENSOR_PIPE,
    THEORETICAL_OCCUPANCY,
    THREADS_PER_INST,
)

BUSY = 60.0  # % of peak above which a unit is the limiter (Nsight Compute's SOL guidance)
IDEAL_SECTORS = 4.0  # 32 threads × 4-byte loads = 128 bytes = 4 sectors per request
# a warp's store touching more sectors than a coalesced float4 store (16) is scattered whatever its width: the
# naive transpose's 4-byte stores, one row apart, touch 32
SCATTERED_STORE_SECTORS = 16.0
DIVERGENT_BELOW = 24.0  # active threads per executed instruction, of 32
# A launch this short is mostly launch overhead (a few µs each on current GPUs): repeated, fusing them comes first.
SHORT_LAUNCH_NS = 10_000.0
REPEATED = 4
# DRAM under this share of the memory throughput: the busy memory unit is a cache or shared memory, fed by
# operands read again and again (issue 37: L1/L2 at 98 %, DRAM at 0.3 %): the fix is reuse, not wider loads
DRAM_IDLE_SHARE = 0.5
# a counter this close (relative) to the value that would change the method: the verdict names both
CLOSE = 0.10
# global loads served by L1 at least this often: neighbouring threads or iterations read the same data again
# through the cache (a stencil's neighbours, a GEMM's rows); a shared-memory or register tile reads it once
REUSED_IN_L1 = 80.0
# global atomics at least this share of the global requests: the L2's atomic units serialise them (a histogram's
# per-element atomicAdd); aggregate in the warp or block first
ATOMIC_SHARE = 0.25
# warps stalled at barriers this much (% of active warps) in a kernel whose shared-memory traffic exceeds its
# global traffic: a shared-memory tree (reduce, scan) synchronising the block at every level
BARRIER_STALL = 10.0
# the call's other kernels take at least this share of its kernel time: each writes its result to DRAM for the
# next to read back, and fusing saves that round trip
OTHERS_SHARE = 0.25
# achieved occupancy at least this (% of max warps) with a latency-bound, DRAM-fed kernel: warps are there, each
# moves too few bytes per instruction (scalar loads); below it the launch gives too few warps
MANY_WARPS = 50.0
STREAMING_DRAM = 30.0  # % of DRAM peak: the kernel already streams from DRAM


def _line_of(inp: JudgeInput, codes: tuple[str, ...], counter: str | None = None) -> int | None:
    if counter and inp.metrics is not None:
        line = hottest_line(inp.metrics, counter)
        if line is not None:
            return line
    return next((f.span.line for f in inp.findings if f.code.startswith(codes)), None)


def classify(d: Derived, r: Roofline | None, sm_count: int) -> Bottleneck:
    sm, mem = d.sm_pct, d.memory_pct
    if sm is None and mem is None:
        return "unknown"
    sm, mem = sm or 0.0, mem or 0.0
    if max(sm, mem) >= BUSY:
        if mem >= sm:
            return "memory"
        return "compute"
    if d.grid_size is not None and d.grid_size < sm_count:
        return "latency"  # SMs left idle: no occupancy setting helps a grid that does not fill the GPU
    achieved = d.achieved_occupancy_pct
    theoretical = d.theoretical_occupancy_pct
    low_theoretical = (
        theoretical is not None
        and theoretical <= 50.0
        and d.occupancy_limiter in ("registers", "shared", "blocks", "warps")
    )
    # achieved occupancy far under a full theoretical one is a launch with too few warps (under a wave), not a
    # resource limit: the warps that run wait on memory, a latency problem (the H200's scale_shift_one_load:
    # 6 % achieved of 100 %, 95 % of warps waiting on loads; its fix was more loads in flight a thread)
    if low_theoretical or (
        achieved is not None and achieved < 25.0 and (theoretical is None or theoretical <= 50.0)
    ):
        return "occupancy"
    if r is not None and sm < 30 and mem < 30 and r.point.total_flops and r.bound == "compute":
        return "compute"
    return "latency"


def measured_verdict(inp: JudgeInput) -> Verdict:
    assert inp.metrics is not None
    d = derive(inp.metrics)
    r = roofline(inp.metrics, inp.gpu)
    bottleneck = classify(d, r, inp.gpu.sm_count)
    method, ev = _choose(bottleneck, d, r, inp)
    runner_up = close_alternative(d, r, inp, method)
    if runner_up is not None:
        other, counter, value = runner_up
        ev.insert(1, Evidence(f"close:{counter}", value, f"within {CLOSE:.0%} of choosing "
                              f"{METHODS[other].title.lower()} instead: both fit"))
    ev.extend(_headline(d, r))
    evidence = _top_evidence(ev)
    m = METHODS[method]
    speed = known_speedup(inp.timing)
    summary = f"{bottleneck.capitalize()}-bound → {m.title.lower()}" if bottleneck != "unknown" else m.title
    return Verdict(
        inp.kernel,
        "measured",
        summary,
        bottleneck=bottleneck,
        method=method,
        method_title=m.title,
        plan=m.plan,
        evidence=evidence,
        speedup=speed,
        roofline=r.summary() if r is not None else "",
        runner_up=runner_up[0] if runner_up is not None else None,
    )


# the derived counters the thresholds between methods read (counts such as the grid size are exact, not nudged)
_NUDGED = (
    "memory_pct", "sm_pct", "dram_pct", "sectors_per_request", "store_sectors_per_request", "bank_conflict_ratio",
    "threads_per_inst", "achieved_occupancy_pct", "theoretical_occupancy_pct", "tensor_pipe_pct", "l1_hit_pct",
    "atomic_share", "shared_per_global",
)


def close_alternative(
    d: Derived, r: Roofline | None, inp: JudgeInput, method: str
) -> tuple[str, str, float] | None:
    """The other method that a counter within `CLOSE` of its value would choose (the method, the counter, its
    value), or None when every counter is clear of the thresholds that separate methods. The Judge says so
    rather than guessing which of two near-equal reads is right."""
    for name in _NUDGED:
        value = getattr(d, name)
        if value is None:
            continue
        for factor in (1 - CLOSE, 1 + CLOSE):
            nudged = replace(d, **{name: value * factor})
            other, _ = _choose(classify(nudged, r, inp.gpu.sm_count), nudged, r, inp)
            if other != method:
                return other, name, value
    return None


def _headline(d: Derived, r: Roofline | None) -> list[Evidence]:
    """The throughput facts behind the bottleneck, in the order they justify it."""
    ev = []
    if d.memory_pct is not None:
        ev.append(Evidence(MEMORY_THROUGHPUT, d.memory_pct, "memory throughput, % of peak"))
    if d.sm_pct is not None:
        ev.append(Evidence(SM_THROUGHPUT, d.sm_pct, "SM throughput, % of peak"))
    if r is not None and r.point.intensity is not None:
        ev.append(Evidence("arithmetic_intensity", r.point.intensity, r.summary().removeprefix("roofline: ")))
    if d.achieved_occupancy_pct is not None:
        ev.append(
            Evidence(ACHIEVED_OCCUPANCY, d.achieved_occupancy_pct, "achieved occupancy, % of max warps")
        )
    return ev


def _top_evidence(ev: list[Evidence]) -> tuple[Evidence, ...]:
    seen, out = set(), []
    for e in ev:
        if e.metric not in seen:
            seen.add(e.metric)
            out.append(e)
    return tuple(out[:4])


def _choose(b: Bottleneck, d: Derived, r: Roofline | None, inp: JudgeInput) -> tuple[str, list[Evidence]]:
    """Exactly one method, with the specific evidence for it first."""
    # Problems that are the cause whatever the headline bottleneck, strongest signal first.
    duration = inp.metrics.get(DURATION) if inp.metrics is not None else None
    launches = inp.metrics.launches if inp.metrics is not None else 1
    if duration is not None and duration < SHORT_LAUNCH_NS and launches >= REPEATED:
        return "fuse-kernel-launches", [
            Evidence(DURATION, duration, f"ns per launch, launched {launches}× in one call: mostly launch overhead")
        ]
    if (
        d.sectors_per_request is not None
        and d.sectors_per_request > 2 * IDEAL_SECTORS
        and b in ("memory", "latency")
    ):
        return "coalesce-global-access", [
            Evidence(
                "sectors_per_request",
                d.sectors_per_request,
                f"sectors per global load request (ideal {IDEAL_SECTORS:g})",
                _line_of(inp, ("CL1",), "sectors"),
            )
        ]
    if (
        d.store_sectors_per_request is not None
        and d.store_sectors_per_request > SCATTERED_STORE_SECTORS
        and b in ("memory", "latency")
    ):
        return "coalesce-global-access", [
            Evidence(
                "store_sectors_per_request",
                d.store_sectors_per_request,
                f"sectors per global store request (ideal {IDEAL_SECTORS:g}; over {SCATTERED_STORE_SECTORS:g} "
                "is scattered)",
                _line_of(inp, ("CL1",), "sectors"),
            )
        ]
    if d.bank_conflict_ratio is not None and d.bank_conflict_ratio > 0.2:
        return "pad-shared-memory", [
            Evidence(
                "shared_bank_conflicts_per_wavefront",
                d.bank_conflict_ratio,
                "extra shared-memory wavefronts from bank conflicts",
                _line_of(inp, ("CL301",), "bank"),
            )
        ]
    atomic = next((f for f in inp.findings if f.code == SingleAddressGlobalAtomic.code), None)
    if atomic is None and d.atomic_share is not None and d.atomic_share >= ATOMIC_SHARE and b in ("memory", "latency"):
        return "use-warp-shuffles", [
            Evidence("atomic_share", d.atomic_share, "share of global requests that are atomics: the L2 serialises "
                     "them; combine in the warp or a shared-memory copy per block first")
        ]
    if atomic is not None and b in ("memory", "latency"):
        # every thread's atomic lands on one address: the L2 serialises them, whatever the throughput says.
        # Before divergence: idle lanes waste at most 32/threads_per_inst of the issue slots, while one address
        # serialises the whole grid (the H200's count_positive: 24 active threads, 4 % of either throughput)
        return "use-warp-shuffles", [
            Evidence(atomic.code, atomic.message, "atomics of every thread on one address", atomic.span.line)
        ]
    if d.threads_per_inst is not None and d.threads_per_inst < DIVERGENT_BELOW:
        return "remove-warp-divergence", [
            Evidence(
                THREADS_PER_INST,
                d.threads_per_inst,
                "active threads per executed instruction (of 32)",
                _line_of(inp, ("CL2",), "thread_inst"),
            )
        ]
    for rule in (_fusion, _reuse_in_l1, _half_on_cuda_cores, _shared_tree):
        chosen = rule(b, d, r, inp)
        if chosen is not None:
            return chosen
    if b == "occupancy":
        return _occupancy_method(d, inp)
    if b == "compute":
        if (
            d.tensor_pipe_pct is not None
            and d.tensor_pipe_pct < 5
            and r is not None
            and r.point.precision != "tensor"
            and r.bound == "compute"
        ):
            return "use-tensor-cores", [
                Evidence(
                    TENSOR_PIPE,
                    d.tensor_pipe_pct,
                    "tensor pipe busy, % (idle: the FMAs run on CUDA cores)",
                )
            ]
        return "reduce-instruction-count", []
    if b == "memory":
        ai = r.point.intensity if r is not None else None
        if ai is not None and ai > 1.0 and (d.dram_pct or 0) >= BUSY:
            # FLOP-heavy work that still streams from DRAM: operands are re-read instead of reused
            return "tile-in-shared-memory", [
                Evidence(DRAM_THROUGHPUT, d.dram_pct or 0.0, "DRAM throughput, % of peak")
            ]
        if _dram_idle(d) and ai is not None and ai >= 1.0:
            # (below 1 FLOP a byte each operand is used about once: there is nothing to reuse)
            # the memory pipeline is saturated while DRAM idles: the same operands cross L1/L2 (or shared memory)
            # over and over; wider loads move them no fewer times, a register or shared tile does
            return "tile-in-shared-memory", [
                Evidence(DRAM_THROUGHPUT, d.dram_pct, f"DRAM throughput, % of peak, against {d.memory_pct:.0f} % "
                         "for the memory pipeline: operands re-read from cache")
            ]
        return "vectorize-memory-access", [
            Evidence(DRAM_THROUGHPUT, d.dram_pct, "DRAM throughput, % of peak")
        ] if d.dram_pct is not None else []
    if b == "latency":
        if d.grid_size is not None and d.grid_size < inp.gpu.sm_count:
            return "increase-parallelism", [
                Evidence(GRID_SIZE, d.grid_size, f"blocks, fewer than the {inp.gpu.sm_count} SMs")
            ]
        if d.top_stall and d.top_stall[0] in ("barrier", "membar"):
            return "use-warp-shuffles", [
                Evidence(
                    f"stall:{d.top_stall[0]}", d.top_stall[1], "top warp stall reason (cycles per issue)"
                )
            ]
        if (
            d.top_stall
            and d.top_stall[0] == "long_scoreboard"
            and (d.achieved_occupancy_pct or 0) >= MANY_WARPS
            and (d.dram_pct or 0) >= STREAMING_DRAM
            and d.sectors_per_request is not None
            and d.sectors_per_request <= IDEAL_SECTORS
        ):
            # enough warps, each waiting on 4-byte loads from DRAM: wider loads put more bytes in flight per
            # instruction (Little's law), which more warps could not
            return "vectorize-memory-access", [
                Evidence(f"stall:{d.top_stall[0]}", d.top_stall[1], "top warp stall reason (cycles per issue)"),
                Evidence("sectors_per_request", d.sectors_per_request,
                         f"sectors per global load request: scalar 4-byte loads (float4 gives {4 * IDEAL_SECTORS:g})"),
            ]
        if d.top_stall:
            return "hide-memory-latency", [
                Evidence(
                    f"stall:{d.top_stall[0]}", d.top_stall[1], "top warp stall reason (cycles per issue)"
                )
            ]
        return "hide-memory-latency", []
    return "increase-parallelism", []


Chosen = tuple[str, list[Evidence]] | None


def _dram_idle(d: Derived) -> bool:
    """DRAM under `DRAM_IDLE_SHARE` of the memory pipeline's throughput: the busy unit is a cache or shared memory."""
    return d.dram_pct is not None and d.memory_pct is not None and d.dram_pct < DRAM_IDLE_SHARE * d.memory_pct


def _fusion(b: Bottleneck, d: Derived, r: Roofline | None, inp: JudgeInput) -> Chosen:
    """A streaming kernel among others in one call that take a real share of its time: fuse them."""
    if b not in ("memory", "latency") or not inp.call or inp.metrics is None:
        return None
    if r is not None and r.point.intensity is not None and r.point.intensity >= inp.gpu.ridge_point:
        return None
    own = inp.metrics.get(DURATION) or 0.0
    others = sum((p.get(DURATION) or 0.0) * p.launches for p in inp.call)
    total = own * inp.metrics.launches + others
    if not total or others / total < OTHERS_SHARE:
        return None
    names = ", ".join(sorted({p.kernel.split("(")[0] for p in inp.call}))
    return "fuse-kernel-launches", [
        Evidence("other_kernels_share", others / total, f"of the call's kernel time in {len(inp.call)} other "
                 f"kernel(s) ({names}): each passes its data through DRAM to the next")
    ]


def _reuse_in_l1(b: Bottleneck, d: Derived, r: Roofline | None, inp: JudgeInput) -> Chosen:
    """A busy kernel whose global loads mostly hit L1 while DRAM idles: the same data is read again and again."""
    if b not in ("memory", "compute") or d.l1_hit_pct is None or d.l1_hit_pct < REUSED_IN_L1:
        return None
    if not _dram_idle(d):
        return None
    return "tile-in-shared-memory", [
        Evidence(L1_HIT_RATE, d.l1_hit_pct, f"% of global sectors served by L1 (DRAM at {d.dram_pct:.0f} %): "
                 "neighbouring threads re-read the same data; load it once into a shared or register tile")
    ]


def _half_on_cuda_cores(b: Bottleneck, d: Derived, r: Roofline | None, inp: JudgeInput) -> Chosen:
    """Half-precision operands of a matrix-product-like kernel (above the ridge) with the tensor pipe idle."""
    features = inp.kernel_info.features if inp.kernel_info else None
    if features is None or not features.half_float_loads or b not in ("memory", "compute"):
        return None
    if r is None or r.bound != "compute" or d.tensor_pipe_pct is None or d.tensor_pipe_pct >= 5:
        return None
    return "use-tensor-cores", [
        Evidence(TENSOR_PIPE, d.tensor_pipe_pct, f"tensor pipe busy, % — {features.half_float_loads} half-precision "
                 "operand loads feed the CUDA cores; mma/WMMA takes them as they are")
    ]


def _shared_tree(b: Bottleneck, d: Derived, r: Roofline | None, inp: JudgeInput) -> Chosen:
    """A block-wide shared-memory tree (reduction, scan) waiting at its barriers: reduce in registers with warp
    shuffles, one shared slot a warp. Not for kernels that shuffle already, nor tiles of a product."""
    features = inp.kernel_info.features if inp.kernel_info else None
    if features is not None and features.warp_shuffle_sites:
        return None
    if d.stall("barrier") < BARRIER_STALL or (d.shared_per_global or 0) < 1.0:
        return None
    if r is not None and r.bound == "compute":
        return None
    return "use-warp-shuffles", [
        Evidence("stall:barrier", d.stall("barrier"), "% of warps waiting at barriers, with "
                 f"{d.shared_per_global:.1f} shared-memory wavefronts a global request: a tree through shared memory")
    ]


def _occupancy_method(d: Derived, inp: JudgeInput) -> tuple[str, list[Evidence]]:
    if d.grid_size is not None and d.grid_size < inp.gpu.sm_count:
        return "increase-parallelism", [
            Evidence(GRID_SIZE, d.grid_size, f"blocks, fewer than the {inp.gpu.sm_count} SMs")
        ]
    ev = []
    limited = d.theoretical_occupancy_pct is not None and d.theoretical_occupancy_pct <= 50.0
    if d.theoretical_occupancy_pct is not None:
        ev.append(
            Evidence(
                THEORETICAL_OCCUPANCY,
                d.theoretical_occupancy_pct,
                f"theoretical occupancy, limited by {d.occupancy_limiter or 'unknown'}",
            )
        )
    if limited and d.occupancy_limiter == "registers":
        ev.insert(
            0,
            Evidence(REGISTERS, d.registers if d.registers is not None else "n/a", "registers per thread"),
        )
        return "reduce-register-pressure", ev
    if limited and d.occupancy_limiter == "shared":
        return "reduce-shared-memory", ev
    return "increase-parallelism", ev
