"""The metric set cudalens asks ncu for, and the kernel-name filter.

CudaForge's Judge reads 24 metrics (`run_ncu.py`, `METRICS`); cudalens asks for those plus what the
line-level hints and the Judge need: SOL throughputs, theoretical occupancy, global sectors per request,
shared-memory bank conflicts and wavefronts, threads per instruction, local-memory (spill) traffic and a few
more stall reasons. `SourceCounters` adds the per-instruction counters that become per-line hints.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

CUDAFORGE_METRICS: tuple[str, ...] = (
    "sm__cycles_active.avg",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "launch__occupancy_limit_blocks",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__registers_per_thread",
    "sm__inst_executed.sum",
    "sm__inst_executed_pipe_fp32.avg.pct_of_peak_sustained_active",
    "sm__inst_executed_pipe_tensor.avg.pct_of_peak_sustained_active",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes.sum.per_second",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__t_sector_hit_rate.pct",
    "l1tex__throughput.avg.pct_of_peak_sustained_active",
    "lts__t_sector_hit_rate.pct",
    "lts__throughput.avg.pct_of_peak_sustained_active",
    "smsp__warp_issue_stalled_memory_dependency_per_warp_active.pct",
    "smsp__warp_issue_stalled_short_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_long_scoreboard_per_warp_active.pct",
    "smsp__warp_issue_stalled_barrier_per_warp_active.pct",
    "smsp__warp_issue_stalled_branch_resolving_per_warp_active.pct",
    "smsp__sass_average_branch_targets_threads_uniform.pct",
)

EXTRA_METRICS: tuple[str, ...] = (
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__maximum_warps_per_active_cycle_pct",  # theoretical occupancy
    "launch__grid_size",
    "launch__block_size",
    "launch__shared_mem_per_block_static",
    "launch__shared_mem_per_block_dynamic",
    "launch__waves_per_multiprocessor",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "smsp__thread_inst_executed_per_inst_executed.ratio",
    "smsp__sass_inst_executed_op_local_ld.sum",  # spills and local arrays
    "smsp__sass_inst_executed_op_local_st.sum",
    "smsp__warp_issue_stalled_mio_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_math_pipe_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_lg_throttle_per_warp_active.pct",
    "smsp__warp_issue_stalled_wait_per_warp_active.pct",
)

METRICS: tuple[str, ...] = CUDAFORGE_METRICS + EXTRA_METRICS

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
