"""Nsight Compute metric names the Judge reads, and the quantities it derives from them."""

from __future__ import annotations

from dataclasses import dataclass

from cudalens.agents.evaluation import ProfileMetrics

SM_THROUGHPUT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_THROUGHPUT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_THROUGHPUT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
ACHIEVED_OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCCUPANCY = "sm__maximum_warps_per_active_cycle_pct"
SECTORS_PER_REQUEST = "l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_ld.ratio"
GLOBAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
SHARED_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SHARED_ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
SHARED_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"
THREADS_PER_INST = "smsp__thread_inst_executed_per_inst_executed.ratio"
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
FMUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
TENSOR_PIPE = "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
TENSOR_PIPE_INST = "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active"
DRAM_BYTES = "dram__bytes.sum"
DRAM_BYTES_READ = "dram__bytes_read.sum"
DRAM_BYTES_WRITE = "dram__bytes_write.sum"
GRID_SIZE = "launch__grid_size"
BLOCK_SIZE = "launch__block_size"
REGISTERS = "launch__registers_per_thread"
OCCUPANCY_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared": "launch__occupancy_limit_shared_mem",
    "blocks": "launch__occupancy_limit_blocks",
    "warps": "launch__occupancy_limit_warps",
}
STALL_PREFIX = "smsp__average_warps_issue_stalled_"
STALL_SUFFIX = "_per_issue_active.ratio"
# the same reasons as a share of active warps (CudaForge's metric set, which the profiler collects)
STALL_PCT_PREFIX = "smsp__warp_issue_stalled_"
STALL_PCT_SUFFIX = "_per_warp_active.pct"

# the few every ncu since 2020 knows on every GPU: enough for the bottleneck, the fallback set
CORE_METRICS: tuple[str, ...] = (SM_THROUGHPUT, MEMORY_THROUGHPUT, DRAM_THROUGHPUT, ACHIEVED_OCCUPANCY)

# the metric set a profiler run should collect for the Judge (ncu --metrics)
JUDGE_METRICS: tuple[str, ...] = (
    SM_THROUGHPUT,
    MEMORY_THROUGHPUT,
    DRAM_THROUGHPUT,
    ACHIEVED_OCCUPANCY,
    THEORETICAL_OCCUPANCY,
    GLOBAL_LD_SECTORS,
    GLOBAL_LD_REQUESTS,
    SHARED_LD_CONFLICTS,
    SHARED_ST_CONFLICTS,
    SHARED_WAVEFRONTS,
    THREADS_PER_INST,
    FFMA,
    FADD,
    FMUL,
    TENSOR_PIPE,
    DRAM_BYTES,
    GRID_SIZE,
    BLOCK_SIZE,
    REGISTERS,
    *OCCUPANCY_LIMITS.values(),
    *(
        f"{STALL_PREFIX}{s}{STALL_SUFFIX}"
        for s in (
            "long_scoreboard",
            "short_scoreboard",
            "barrier",
            "mio_throttle",
            "lg_throttle",
            "math_pipe_throttle",
            "wait",
            "not_selected",
            "membar",
            "branch_resolving",
        )
    ),
)


@dataclass(frozen=True)
class Derived:
    """What the Judge computes once from a kernel's raw metrics."""

    sm_pct: float | None
    memory_pct: float | None
    dram_pct: float | None
    achieved_occupancy_pct: float | None
    theoretical_occupancy_pct: float | None
    sectors_per_request: float | None
    bank_conflict_ratio: float | None  # conflicts per shared wavefront
    threads_per_inst: float | None  # of 32
    flops: float | None
    dram_bytes: float | None
    tensor_pipe_pct: float | None
    occupancy_limiter: str | None
    grid_size: float | None
    block_size: float | None
    registers: float | None
    top_stall: tuple[str, float] | None

    @property
    def arithmetic_intensity(self) -> float | None:
        if self.flops is None or not self.dram_bytes:
            return None
        return self.flops / self.dram_bytes


def derive(p: ProfileMetrics) -> Derived:
    sectors = p.get(SECTORS_PER_REQUEST)
    if sectors is None and p.get(GLOBAL_LD_REQUESTS):
        sectors = (p.get(GLOBAL_LD_SECTORS) or 0.0) / p.get(GLOBAL_LD_REQUESTS)
    conflicts = None
    if p.get(SHARED_WAVEFRONTS):
        conflicts = ((p.get(SHARED_LD_CONFLICTS) or 0.0) + (p.get(SHARED_ST_CONFLICTS) or 0.0)) / p.get(
            SHARED_WAVEFRONTS
        )
    flop_counts = [p.get(FFMA), p.get(FADD), p.get(FMUL)]
    flops = None
    if any(v is not None for v in flop_counts):
        ffma, fadd, fmul = (v or 0.0 for v in flop_counts)
        flops = 2 * ffma + fadd + fmul
    dram_bytes = p.get(DRAM_BYTES)
    if dram_bytes is None and (p.get(DRAM_BYTES_READ) is not None or p.get(DRAM_BYTES_WRITE) is not None):
        dram_bytes = (p.get(DRAM_BYTES_READ) or 0.0) + (p.get(DRAM_BYTES_WRITE) or 0.0)
    limits = {k: p.get(v) for k, v in OCCUPANCY_LIMITS.items() if p.get(v) is not None}
    limiter = min(limits, key=lambda k: limits[k]) if limits else None
    stalls = {}
    for prefix, suffix in ((STALL_PCT_PREFIX, STALL_PCT_SUFFIX), (STALL_PREFIX, STALL_SUFFIX)):
        stalls = {
            name[len(prefix) : -len(suffix)]: value
            for name, value in p.metrics
            if name.startswith(prefix) and name.endswith(suffix)
        } or stalls
    top = max(stalls.items(), key=lambda kv: kv[1]) if stalls else None
    return Derived(
        sm_pct=p.get(SM_THROUGHPUT),
        memory_pct=p.get(MEMORY_THROUGHPUT),
        dram_pct=p.get(DRAM_THROUGHPUT),
        achieved_occupancy_pct=p.get(ACHIEVED_OCCUPANCY),
        theoretical_occupancy_pct=p.get(THEORETICAL_OCCUPANCY),
        sectors_per_request=sectors,
        bank_conflict_ratio=conflicts,
        threads_per_inst=p.get(THREADS_PER_INST),
        flops=flops,
        dram_bytes=dram_bytes,
        tensor_pipe_pct=p.get(TENSOR_PIPE, p.get(TENSOR_PIPE_INST)),
        occupancy_limiter=limiter,
        grid_size=p.get(GRID_SIZE),
        block_size=p.get(BLOCK_SIZE),
        registers=p.get(REGISTERS),
        top_stall=top,
    )


def hottest_line(p: ProfileMetrics, metric_fragment: str) -> int | None:
    """The source line with the largest per-line counter whose name contains `metric_fragment`."""
    rows = [c for c in p.lines if metric_fragment in c.metric]
    return max(rows, key=lambda c: c.value).line if rows else None
