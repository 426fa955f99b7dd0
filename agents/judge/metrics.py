"""The quantities the Judge derives from a kernel's Nsight Compute metrics. The names are the profiler's
(`profiler/ncu/metrics.py`): what is read here is what ncu is asked for. FLOPs, bytes and time are the
roofline's (roofline.py)."""

from __future__ import annotations

from dataclasses import dataclass

from cudalens.agents.evaluation import ProfileMetrics
from cudalens.profiler.ncu.metrics import (
    ACHIEVED_OCCUPANCY,
    BLOCK_SIZE,
    DRAM_THROUGHPUT,
    GLOBAL_ATOM_REQUESTS,
    GLOBAL_LD_REQUESTS,
    GLOBAL_LD_SECTORS,
    GLOBAL_RED_REQUESTS,
    GLOBAL_ST_REQUESTS,
    GLOBAL_ST_SECTORS,
    GRID_SIZE,
    L1_HIT_RATE,
    MEMORY_THROUGHPUT,
    OCCUPANCY_LIMITS,
    REGISTERS,
    SHARED_LD_CONFLICTS,
    SHARED_LD_WAVEFRONTS,
    SHARED_ST_CONFLICTS,
    SHARED_ST_WAVEFRONTS,
    SM_THROUGHPUT,
    STALLS,
    TENSOR_PIPE,
    THEORETICAL_OCCUPANCY,
    THREADS_PER_INST,
)


@dataclass(frozen=True)
class Derived:
    """What the Judge computes once from a kernel's raw metrics."""

    sm_pct: float | None
    memory_pct: float | None
    dram_pct: float | None
    achieved_occupancy_pct: float | None
    theoretical_occupancy_pct: float | None
    sectors_per_request: float | None  # global loads
    store_sectors_per_request: float | None  # global stores
    bank_conflict_ratio: float | None  # conflicts per shared wavefront
    threads_per_inst: float | None  # of 32
    tensor_pipe_pct: float | None
    occupancy_limiter: str | None
    grid_size: float | None
    block_size: float | None
    registers: float | None
    l1_hit_pct: float | None = None  # sectors served by L1: data read again by neighbouring threads or iterations
    atomic_share: float | None = None  # global atomic requests (ATOM + RED) among all global requests
    shared_per_global: float | None = None  # shared-memory wavefronts per global request
    stalls: tuple[tuple[str, float], ...] = ()  # every stall reason measured, % of active warps, in STALLS order

    def stall(self, reason: str) -> float:
        return dict(self.stalls).get(reason, 0.0)

    @property
    def top_stall(self) -> tuple[str, float] | None:
        """The reason warps stall on most (the first of equals in STALLS order)."""
        return max(self.stalls, key=lambda kv: kv[1]) if self.stalls else None


def derive(p: ProfileMetrics) -> Derived:
    sectors = None
    if p.get(GLOBAL_LD_REQUESTS):
        sectors = (p.get(GLOBAL_LD_SECTORS) or 0.0) / p.get(GLOBAL_LD_REQUESTS)
    store_sectors = None
    if p.get(GLOBAL_ST_REQUESTS):
        store_sectors = (p.get(GLOBAL_ST_SECTORS) or 0.0) / p.get(GLOBAL_ST_REQUESTS)
    wavefronts = (p.get(SHARED_LD_WAVEFRONTS) or 0.0) + (p.get(SHARED_ST_WAVEFRONTS) or 0.0)
    conflicts = None
    if wavefronts:
        conflicts = ((p.get(SHARED_LD_CONFLICTS) or 0.0) + (p.get(SHARED_ST_CONFLICTS) or 0.0)) / wavefronts
    loads, stores = p.get(GLOBAL_LD_REQUESTS) or 0.0, p.get(GLOBAL_ST_REQUESTS) or 0.0
    atomics = (p.get(GLOBAL_ATOM_REQUESTS) or 0.0) + (p.get(GLOBAL_RED_REQUESTS) or 0.0)
    known_atomics = p.get(GLOBAL_ATOM_REQUESTS) is not None or p.get(GLOBAL_RED_REQUESTS) is not None
    requests = loads + stores + atomics
    limits = {k: p.get(v) for k, v in OCCUPANCY_LIMITS.items() if p.get(v) is not None}
    limiter = min(limits, key=lambda k: limits[k]) if limits else None
    stalls = {reason: p.get(name) for reason, name in STALLS.items() if p.get(name) is not None}
    return Derived(
        sm_pct=p.get(SM_THROUGHPUT),
        memory_pct=p.get(MEMORY_THROUGHPUT),
        dram_pct=p.get(DRAM_THROUGHPUT),
        achieved_occupancy_pct=p.get(ACHIEVED_OCCUPANCY),
        theoretical_occupancy_pct=p.get(THEORETICAL_OCCUPANCY),
        sectors_per_request=sectors,
        store_sectors_per_request=store_sectors,
        bank_conflict_ratio=conflicts,
        threads_per_inst=p.get(THREADS_PER_INST),
        tensor_pipe_pct=p.get(TENSOR_PIPE),
        occupancy_limiter=limiter,
        grid_size=p.get(GRID_SIZE),
        block_size=p.get(BLOCK_SIZE),
        registers=p.get(REGISTERS),
        l1_hit_pct=p.get(L1_HIT_RATE),
        atomic_share=atomics / requests if known_atomics and requests else None,
        shared_per_global=wavefronts / (loads + stores) if wavefronts and loads + stores else None,
        stalls=tuple(stalls.items()),
    )


def hottest_line(p: ProfileMetrics, metric_fragment: str) -> int | None:
    """The source line with the largest per-line counter whose name contains `metric_fragment`."""
    rows = [c for c in p.lines if metric_fragment in c.metric]
    return max(rows, key=lambda c: c.value).line if rows else None
