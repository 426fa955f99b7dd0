"""A real optimize run folder for report tests: the loop on CPU (real worker, the local OpenAI stand-in as the
Coder) whose correct candidates carry Nsight Compute counters as ncu reports them for a row sum on an H200 (the
CPU evaluation has no GPU to profile)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from cudalens.agents.coder.client import CoderClient
from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.evaluation import (
    CandidateEvaluator,
    Evaluation,
    EvaluationKind,
    LineCounter,
    ProfileMetrics,
)
from cudalens.agents.optimize_loop import LoopSettings, OptimizeLoop
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
from cudalens.worker.child.anti_cheat import AntiCheatPolicy
from tests.agents.fake_openai import FakeOpenAI, reply
from tests.agents.kernelbench_cpu import FAST, REFERENCE, SLOW, START, WRONG, fenced

KERNEL = "row_sum"


def _counters(duration_ns: float, dram_bytes: float, fadd: float, sm: float, mem: float) -> dict[str, float]:
    return {
        "gpu__time_duration.sum": duration_ns,
        "dram__bytes.sum": dram_bytes,
        "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum": fadd,
        "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum": 0.0,
        "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum": 0.0,
        "sm__throughput.avg.pct_of_peak_sustained_elapsed": sm,
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed": mem,
        "dram__throughput.avg.pct_of_peak_sustained_elapsed": mem,
        "sm__warps_active.avg.pct_of_peak_sustained_active": 70.0,
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 32.0 * dram_bytes / 128,
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": dram_bytes / 128,
    }


# per candidate: (counters, per-line waste on the candidate's own lines)
PROFILES = {
    START: (_counters(4.1e5, 1.05e6, 32768.0, 8.0, 71.0), ((27, "excess_sectors", 9.0e5), (26, "excess_sectors", 1e4))),
    SLOW: (_counters(2.0e6, 2.6e6, 163840.0, 9.0, 70.0), ((29, "excess_sectors", 4.4e6),)),
    FAST: (_counters(6.2e3, 1.31e5, 32768.0, 12.0, 64.0), ((25, "thread_inst_lost", 2.0e3),)),
}


@dataclass
class WithRecordedCounters:
    """The CPU evaluation of each candidate, with the counters above for the correct ones."""

    inner: CandidateEvaluator

    def evaluate(self, source: str, kind: EvaluationKind = "full") -> Evaluation:
        evaluation = self.inner.evaluate(source, kind)
        if not evaluation.correct or source not in PROFILES:
            return evaluation
        counters, lines = PROFILES[source]
        profile = ProfileMetrics.of(KERNEL, counters, tuple(LineCounter(*x) for x in lines))
        return replace(evaluation, profiles=(profile,))

    def close(self) -> None:
        self.inner.close()


def recorded_run(root: Path, key_env: str) -> Path:
    """Runs 3 rounds (wrong, slow, fast) and returns the run's folder."""
    script = [reply(fenced(WRONG)), reply(fenced(SLOW, "Fixed the scale.")), reply(fenced(FAST))]
    with FakeOpenAI(script) as fake:
        coder = CoderClient(CoderSettings(base_url=fake.base_url, model="fake", api_key_env=key_env,
                                          price_in_per_1k=0.002, price_out_per_1k=0.006), backoff_s=0.01)
        inner = ProfilerEvaluator(REFERENCE, ProfilerEvaluatorSettings(device="cpu", timeout_s=120, budget_ms=50,
                                                                       secret_env=(key_env,)))
        evaluator = WithRecordedCounters(inner)
        try:
            policy = AntiCheatPolicy(require_custom_kernel=False, allow_torch_compute=True)
            loop = OptimizeLoop(evaluator, coder, REFERENCE, kernel=KERNEL,
                                settings=LoopSettings(rounds=3, anti_cheat=policy), run_root=root / "runs")
            result = loop.run(START)
        finally:
            evaluator.close()
    assert result.run_dir is not None and result.best_source == FAST
    return result.run_dir
