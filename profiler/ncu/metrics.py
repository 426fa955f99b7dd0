"""`MetricSet`: the one list of Nsight Compute metrics cudalens asks for, named by who reads them.

The Judge (agents/judge/metrics.py) and the roofline read the names defined here and nothing else; the per-line
hints read `SOURCE_METRICS`; the request (`METRICS`) is their union with CudaForge's 24 (`run_ncu.py`,
`METRICS`). A contract test fails when a reader names a metric not requested.
Names checked against Nsight Compute 2025.3's metric reference and its roofline sections
(SpeedOfLight_RooflineChart: `2 × FFMA + FADD + FMUL` thread instructions; the tensor path's `sm__ops_path_*`
count math operations, two per multiply-accumulate).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

# Speed of light and occupancy: the bottleneck
SM_THROUGHPUT = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
MEMORY_THROUGHPUT = "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"
DRAM_THROUGHPUT = "dram__throughput.avg.pct_of_peak_sustained_elapsed"
ACHIEVED_OCCUPANCY = "sm__warps_active.avg.pct_of_peak_sustained_active"
THEORETICAL_OCCUPANCY = "sm__maximum_warps_per_active_cycle_pct"
OCCUPANCY_LIMITS = {
    "registers": "launch__occupancy_limit_registers",
    "shared": "launch__occupancy_limit_shared_mem",
    "blocks": "launch__occupancy_limit_blocks",
    "warps": "launch__occupancy_limit_warps",
}
GRID_SIZE = "launch__grid_size"
BLOCK_SIZE = "launch__block_size"
REGISTERS = "launch__registers_per_thread"
# The method: coalescing, bank conflicts, divergence, tensor pipe
GLOBAL_LD_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_LD_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
GLOBAL_ST_SECTORS = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"
GLOBAL_ST_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
SHARED_LD_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
SHARED_ST_CONFLICTS = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
SHARED_LD_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SHARED_ST_WAVEFRONTS = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
THREADS_PER_INST = "smsp__thread_inst_executed_per_inst_executed.ratio"
# global atomics: returning (ATOM) and fire-and-forget (RED) requests, against the loads and stores above
GLOBAL_ATOM_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum"
GLOBAL_RED_REQUESTS = "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"
TENSOR_PIPE = "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active"
L1_HIT_RATE = "l1tex__t_sector_hit_rate.pct"
L2_HIT_RATE = "lts__t_sector_hit_rate.pct"
LOCAL_LOADS = "smsp__sass_inst_executed_op_local_ld.sum"  # spills and local arrays
LOCAL_STORES = "smsp__sass_inst_executed_op_local_st.sum"
# Warp stall reasons as a share of active warps (CudaForge's form)
STALL_REASONS = (
    "memory_dependency", "short_scoreboard", "long_scoreboard", "barrier", "branch_resolving", "mio_throttle",
    "math_pipe_throttle", "lg_throttle", "wait",
)
STALLS = {r: f"smsp__warp_issue_stalled_{r}_per_warp_active.pct" for r in STALL_REASONS}
# The roofline: work, traffic and time of the launch
DURATION = "gpu__time_duration.sum"  # ns
DRAM_BYTES = "dram__bytes.sum"
DRAM_BYTES_READ = "dram__bytes_read.sum"
DRAM_BYTES_WRITE = "dram__bytes_write.sum"
Precision = Literal["fp32", "fp16", "tensor"]
FFMA = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"
FADD = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum"
FMUL = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"
HFMA = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum"  # FP16 and BF16 on the CUDA cores
HADD = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum"
HMUL = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum"
TENSOR_OPS = {
    "fp16": "sm__ops_path_tensor_src_fp16_dst_fp32.sum",
    "fp16_acc16": "sm__ops_path_tensor_src_fp16_dst_fp16.sum",
    "bf16": "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "tf32": "sm__ops_path_tensor_src_tf32_dst_fp32.sum",
}
# counter → (precision, FLOP per count): an FMA is two operations (Nsight Compute's roofline convention)
FLOP_COUNTERS: dict[str, tuple[Precision, float]] = {
    FFMA: ("fp32", 2.0), FADD: ("fp32", 1.0), FMUL: ("fp32", 1.0),
    HFMA: ("fp16", 2.0), HADD: ("fp16", 1.0), HMUL: ("fp16", 1.0),
    **{name: ("tensor", 1.0) for name in TENSOR_OPS.values()},
}

CUDAFORGE_METRICS: tuple[str, ...] = (
    "sm__cycles_active.avg",
    ACHIEVED_OCCUPANCY,
    OCCUPANCY_LIMITS["blocks"],
    OCCUPANCY_LIMITS["registers"],
    OCCUPANCY_LIMITS["shared"],
    REGISTERS,
    "sm__inst_executed.sum",
    "sm__inst_executed_pipe_fp32.avg.pct_of_peak_sustained_active",
    TENSOR_PIPE,
    DRAM_BYTES_READ,
    DRAM_BYTES_WRITE,
    DRAM_THROUGHPUT,
    "dram__bytes.sum.per_second",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    L1_HIT_RATE,
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    L2_HIT_RATE,
    "lts__throughput.avg.pct_of_peak_sustained_active",
    STALLS["memory_dependency"],
    STALLS["short_scoreboard"],
    STALLS["long_scoreboard"],
    STALLS["barrier"],
    STALLS["branch_resolving"],
    "smsp__sass_average_branch_targets_threads_uniform.pct",
)


@dataclass(frozen=True)
class MetricSet:
    """The request, by reader. `request()` is what ncu is asked for, in a stable order without repeats."""

    judge: tuple[str, ...]  # the bottleneck and the method (agents/judge)
    roofline: tuple[str, ...]  # the kernel's point: FLOPs by precision, DRAM bytes, duration
    context: tuple[str, ...]  # shown in reports (CudaForge's set)
    launch: tuple[str, ...]  # the launch's shape, for reports

    def request(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.judge, *self.roofline, *self.context, *self.launch)))


METRIC_SET = MetricSet(
    judge=(
        SM_THROUGHPUT, MEMORY_THROUGHPUT, DRAM_THROUGHPUT, ACHIEVED_OCCUPANCY, THEORETICAL_OCCUPANCY,
        *OCCUPANCY_LIMITS.values(), GRID_SIZE, BLOCK_SIZE, REGISTERS,
        GLOBAL_LD_SECTORS, GLOBAL_LD_REQUESTS, GLOBAL_ST_SECTORS, GLOBAL_ST_REQUESTS, SHARED_LD_CONFLICTS, SHARED_ST_CONFLICTS,
        SHARED_LD_WAVEFRONTS, SHARED_ST_WAVEFRONTS, THREADS_PER_INST, TENSOR_PIPE, *STALLS.values(),
        GLOBAL_ATOM_REQUESTS, GLOBAL_RED_REQUESTS, L1_HIT_RATE,
    ),
    roofline=(DURATION, DRAM_BYTES, DRAM_BYTES_READ, DRAM_BYTES_WRITE, *FLOP_COUNTERS),
    context=CUDAFORGE_METRICS,
    launch=(
        "launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic",
        "launch__waves_per_multiprocessor", LOCAL_LOADS, LOCAL_STORES,
    ),
)
METRICS: tuple[str, ...] = METRIC_SET.request()

# Per-instruction counters of the SourceCounters section (ncu_report metric names), summed per line.
SOURCE_METRICS: dict[str, str] = {
    "inst_executed": "inst_executed",
    "thread_inst_executed_true": "thread_inst_executed",
    "memory_l1_tag_requests_global": "global_requests",
    "memory_l2_theoretical_sectors_global": "global_sectors",
    "memory_l2_theoretical_sectors_global_ideal": "global_sectors_ideal",
    "memory_l1_wavefronts_shared": "shared_wavefronts",
    "memory_l1_wavefronts_shared_ideal": "shared_wavefronts_ideal",
    "smsp__branch_targets_threads_divergent": "divergent_branches",
    "smsp__pcsamp_sample_count": "stall_samples",
}


def kernel_filter(names: Iterable[str]) -> str | None:
    """`--kernel-name` value matching each name as a whole identifier, whatever surrounds it.

    ncu compares against `--kernel-name-base function` (no parameters); a regex that also tolerates
    namespaces, template arguments and parameter lists still matches when a version or a setting hands it
    the demangled name. An exact name (CudaForge's filter) profiles nothing for `k<float>`.
    """
    unique = sorted({n for n in names if n})
    if not unique:
        return None
    alternatives = "|".join(re.escape(n) for n in unique)
    return f"regex:(^|[^A-Za-z0-9_])({alternatives})($|[^A-Za-z0-9_])"
