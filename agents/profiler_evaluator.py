"""`CandidateEvaluator` over the profiler's worker: its `test` job (≥ 5 poisoned trials against `Model`, then
timing with CUDA events and L2 flushes) in a long-lived `WorkerPool` (torch imported once, a crash or timeout
retires the worker), and its Nsight Compute profile (`profile_file`: per-kernel metrics and per-line source
counters) for correct candidates on a GPU.

The Coder's API key never reaches candidate code: the worker and the profiled target (under ncu, from a warm
standby when it can) start from the clean environment (profiler/child_env.py), and `secret_env` names more
variables to keep out of it and out of this process's environment block.
"""

from __future__ import annotations

import logging
import math
import shutil
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

from cudalens.agents.evaluation import (
    CompileOutcome,
    CorrectnessOutcome,
    Evaluation,
    EvaluationKind,
    LineCounter,
    ProfileMetrics,
    source_hash,
)
from cudalens.profiler import child_env, processes
from cudalens.profiler.ncu import metrics as M
from cudalens.profiler.ncu import standby
from cudalens.profiler.ncu.profile import ProfileRequest, prepare_standby, profile_file
from cudalens.profiler.reverify import verified
from cudalens.worker.child.protocol import JobRequest, seconds_text
from cudalens.worker.child.results import Baseline, NcuProfile, TestResult, TimingResult
from cudalens.worker.pool import GPU_WARMUP, WorkerPool, WorkerStartError

logger = logging.getLogger("cudalens.agents")


@dataclass(frozen=True)
class ProfilerEvaluatorSettings:
    python: str = sys.executable
    timeout_s: float = 600.0  # per job: a cold load_inline build is part of it
    trials: int = 5
    seed: int = 42
    budget_ms: float = 100.0
    device: str | None = None  # None: cuda when present
    profile: bool = True  # run ncu on correct candidates when a GPU and ncu are present
    # profile from a warm ncu target (profiler/ncu/standby.py): on the H200 the loop's median round outside the
    # LLM went from 8.4 s to 4.9 s with it (benchmarks/gpu_optimize_loop.py)
    ncu_standby: bool = True
    secret_env: tuple[str, ...] = ("OPENAI_API_KEY",)  # secrets whatever their names (the Coder's key variable)
    # a new worker (and scratch folder) per candidate: nothing one candidate leaves in the process reaches the
    # next, at the price of importing torch each time (≈ 3–4 s); `cudalens optimize --evaluator isolated`
    fresh_worker: bool = False
    # the one GPU this evaluator's worker sees (`CUDA_VISIBLE_DEVICES` of its worker), as the parent names it:
    # the search runs one evaluator per GPU (agents/search/devices.py); None: the parent's own
    visible_device: str | None = None
    # candidates may leave the work to PyTorch's kernels (the loop's policy): the device-time attribution then
    # does not ask the file's kernels to carry it (worker/child/lib/attribution.py)
    allow_torch_ops: bool = False
    # what a candidate's speedup is against (`cudalens optimize --baseline`): "compile" makes the search beat
    # torch.compile of the reference, which every timing then includes
    baseline: Baseline = "eager"


@dataclass
class ProfilerEvaluator:
    reference_source: str
    settings: ProfilerEvaluatorSettings = field(default_factory=ProfilerEvaluatorSettings)
    _pool: WorkerPool | None = field(default=None, init=False, repr=False)
    _job: str | None = field(default=None, init=False, repr=False)
    _scratch: str = field(default="", init=False, repr=False)
    _profiling: processes.CancelToken | None = field(default=None, init=False, repr=False)
    # its warm ncu targets are its own: close() ends them, not the server's or another run's
    _standby_owner: str = field(default_factory=lambda: f"optimize-{uuid.uuid4().hex[:12]}", init=False, repr=False)
    # an evaluation ran on CUDA, or the search gave this evaluator a GPU of its own: each profiled round then
    # warms its ncu target and a spare for the next while it is built and tested (round 0 included: its target
    # starts during its cold build instead of after it, ≈ 4 s of the first round on the H200)
    _on_gpu: bool = field(default=False, init=False, repr=False)
    _pool_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _closed: bool = field(default=False, init=False, repr=False)  # close() ran: warm() starts nothing after it

    def __post_init__(self) -> None:
        self._on_gpu = self.settings.visible_device is not None and self.settings.device != "cpu"

    def _worker_pool(self) -> WorkerPool:
        with self._pool_lock:  # warm() may make it beside an evaluation (a Ray actor runs two calls at once)
            return self._new_pool() if self._pool is None else self._pool

    def _device_env(self) -> dict[str, str] | None:
        """The one GPU of this evaluator (the search runs one per GPU): added to its workers' clean environment."""
        return {"CUDA_VISIBLE_DEVICES": self.settings.visible_device} if self.settings.visible_device else None

    def _new_pool(self) -> WorkerPool:
        child_env.hide(*self.settings.secret_env)
        device = self._device_env()
        # candidates are the LLM's code: their relative writes land in a scratch folder, not the project
        self._scratch = tempfile.mkdtemp(prefix="cudalens-candidates-")
        warmup = GPU_WARMUP if self._on_gpu else {"modules": ["torch"]}
        self._pool = WorkerPool(python=self.settings.python, env=device, warmup=warmup, cwd=self._scratch)
        return self._pool

    def warm(self) -> None:
        """Start the worker now, in the background (its warm-up imports torch and, on a GPU, starts the
        precompiled header), so that round 0's build, ahead or in it, finds them under way. Errors are the
        first evaluation's to report."""
        with self._pool_lock:
            pool = None if self._closed else self._pool or self._new_pool()
        if pool is not None:
            pool.prestart()

    def close(self) -> None:
        standby.drop_owner(self._standby_owner)  # the warm ncu targets waiting for a round that will not come
        with self._pool_lock:
            self._closed = True
        self._close_pool()

    def _close_pool(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None
            shutil.rmtree(self._scratch, ignore_errors=True)

    def cancel(self) -> None:
        """Kill what this evaluator runs now: the worker's job, or the ncu run profiling a candidate."""
        if self._pool is not None and self._job is not None:
            self._pool.cancel(self._job)
        if self._profiling is not None:
            self._profiling.cancel()

    def evaluate(self, source: str, kind: EvaluationKind = "full") -> Evaluation:
        started = time.perf_counter()
        folder = Path(tempfile.mkdtemp(prefix="cudalens-candidate-"))
        try:
            reference, candidate = folder / "reference.py", folder / "candidate.py"
            reference.write_text(self.reference_source, encoding="utf-8")
            candidate.write_text(source, encoding="utf-8")
            if kind in ("full", "profile") and self.settings.profile and self.settings.ncu_standby and self._on_gpu:
                # this round's target and a spare that warms while it is built and tested, so that a round right
                # after this one finds one ready, as a save does (profiler/ncu/standby.py)
                prepare_standby(self._profile_request(candidate, reference), str(candidate), source, count=2)
            payload = {
                "path": str(candidate),
                "reference": str(reference),
                "trials": self.settings.trials,
                "seed": self.settings.seed,
                "time": kind in ("full", "time"),  # "profile": the timing is the one the candidate already has
                "budget_ms": self.settings.budget_ms,
                # the loop ran the same static checks before it ran the candidate, with its own policy
                "static_checks": False,
                "allow_torch_ops": self.settings.allow_torch_ops,
                "baseline": self.settings.baseline,
            }
            if self.settings.device:
                payload["device"] = self.settings.device
            pool = self._worker_pool()
            self._job = pool.new_id()
            try:
                result = pool.run(JobRequest(self._job, "test", payload, self.settings.timeout_s))
                # a speedup above 10× counts once a fresh worker agrees (profiler/reverify.py)
                result = verified(result, payload, timeout_s=self.settings.timeout_s, python=self.settings.python,
                                  env=self._device_env(), cwd=self._scratch)
                status, data, error = result.status, result.payload or {}, result.error
            except WorkerStartError as exc:
                status, data, error = "crash", {}, f"cannot start the worker: {exc}"
            finally:
                self._job = None
            evaluation = evaluation_from_job(source, status, data, error, self.settings.timeout_s)
            took = time.perf_counter() - started
            # where a round's time went (a first round's is mostly the worker's start and the first build)
            spent = seconds_text(data, "; ")
            logger.info("candidate %s in %.1f s (the worker's start included%s)", status, took, spent and f"; {spent}")
            self._on_gpu = self._on_gpu or evaluation.device.startswith("cuda")
            evaluation = replace(evaluation, builds=tuple(data.get("builds") or ()), stages=(("build+test+time", took),))
            if (
                kind in ("full", "profile")
                and self.settings.profile
                and evaluation.correct
                and evaluation.device.startswith("cuda")
            ):
                profiling = time.perf_counter()
                evaluation = self.add_profile(evaluation, candidate, reference)
                evaluation = replace(evaluation, stages=(*evaluation.stages, ("ncu", time.perf_counter() - profiling)))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
            if self.settings.fresh_worker:
                self._close_pool()
        return _with_seconds(evaluation, time.perf_counter() - started)

    def add_profile(self, evaluation: Evaluation, candidate: Path, reference: Path) -> Evaluation:
        """`profile_file` for the candidate; from a warm ncu target when `ncu_standby` (the next round's starts
        as this one ends: ≈ 4 s less a round on the H200)."""
        request = self._profile_request(candidate, reference)
        self._profiling = processes.CancelToken()
        try:
            profile = profile_file(request, self._profiling)
        except Exception as exc:  # a profile is evidence, never the reason a round fails (a cancel included)
            return _noted(evaluation, f"ncu profile failed: {type(exc).__name__}: {str(exc)[:300]}")
        finally:
            self._profiling = None
        if profile.error:
            return _noted(evaluation, f"ncu: {profile.error}")
        return Evaluation(**{**evaluation.__dict__, "profiles": profile_metrics(profile)})

    def _profile_request(self, candidate: Path, reference: Path) -> ProfileRequest:
        return ProfileRequest(
            str(candidate), str(reference), python=self.settings.python, timeout=self.settings.timeout_s,
            standby=self.settings.ncu_standby,
            standby_owner=self._standby_owner, device=self.settings.visible_device,
        )


def profile_metrics(profile: NcuProfile) -> tuple[ProfileMetrics, ...]:
    """The Judge's view of an ncu profile: the first launch of each kernel; its per-line source counters under
    the metric fragments the Judge looks for (sectors, bank, thread_inst); and, where the kernel-level metric is
    missing, sectors per request, bank conflicts and threads per instruction summed from those lines."""
    out: dict[str, ProfileMetrics] = {}
    launches = Counter(k.base_name for k in profile.kernels)
    for k in profile.kernels:
        if k.base_name in out:
            continue
        rows = [c for c in profile.lines if not c.kernel or base(c.kernel) == k.base_name]
        lines = []
        for c in rows:
            if c.global_sectors:
                lines.append(LineCounter(c.line, "excess_sectors", c.excess_sectors))
            if c.shared_wavefronts:
                lines.append(LineCounter(c.line, "bank_conflict_wavefronts", c.bank_conflict_wavefronts))
            if c.inst_executed:
                lost = (32 - c.threads_per_instruction) * c.inst_executed
                lines.append(LineCounter(c.line, "thread_inst_lost", lost))
        metrics = {**_from_lines(rows), **k.metrics}
        out[k.base_name] = ProfileMetrics.of(k.base_name, metrics, tuple(lines), launches[k.base_name])
    return tuple(out.values())


def _from_lines(rows: list) -> dict[str, float]:
    derived: dict[str, float] = {}
    requests = sum(c.global_requests for c in rows)
    if requests:
        derived[M.GLOBAL_LD_REQUESTS] = requests
        derived[M.GLOBAL_LD_SECTORS] = sum(c.global_sectors for c in rows)
    wavefronts = sum(c.shared_wavefronts for c in rows)
    if wavefronts:
        derived[M.SHARED_LD_WAVEFRONTS] = wavefronts
        derived[M.SHARED_LD_CONFLICTS] = sum(c.bank_conflict_wavefronts for c in rows)
    executed = sum(c.inst_executed for c in rows)
    if executed and any(c.thread_inst_executed for c in rows):
        derived[M.THREADS_PER_INST] = sum(c.thread_inst_executed for c in rows) / executed
    return derived


def base(name: str) -> str:
    from cudalens.worker.child.results import base_kernel_name

    return base_kernel_name(name)


def _noted(evaluation: Evaluation, note: str) -> Evaluation:
    return Evaluation(**{**evaluation.__dict__, "notes": (*evaluation.notes, note)})


def _with_seconds(evaluation: Evaluation, seconds: float) -> Evaluation:
    return Evaluation(**{**evaluation.__dict__, "seconds": seconds})


def evaluation_from_job(source: str, status: str, payload: dict, error: str | None, timeout_s: float) -> Evaluation:
    digest = source_hash(source)
    if status == "timeout":
        # the job's stage and its limit (a candidate call: 20× the reference's, floor 10 s), else the job's own
        said = (error or "").strip().splitlines()[0] if (error or "").strip() else ""
        return Evaluation(
            digest,
            CompileOutcome(ok=True),
            CorrectnessOutcome(
                "timeout", message=said or f"the candidate ran past the worker's {timeout_s:g} s limit and was killed"
            ),
        )
    if status != "ok" or "test" not in payload:
        detail = (error or "the worker returned no result").strip()
        return Evaluation(
            digest,
            CompileOutcome(ok=True),
            CorrectnessOutcome(
                "crashed",
                message=detail.splitlines()[-1][:300] if detail else status,
                traceback=detail[-6000:],
            ),
        )
    test = TestResult.from_json(payload["test"])
    device = test.device or "cpu"
    if test.status == "error" and test.message.startswith(("loading ", "the candidate failed to build")):
        # the candidate's module raised while loading: a load_inline build error or a Python error in it
        return Evaluation(
            digest,
            CompileOutcome(ok=False, log=test.traceback or test.message),
            CorrectnessOutcome("not_run"),
            device=device,
        )
    checks = [o for t in test.trials for o in t.outputs]
    abs_err = max((o.max_abs_error for o in checks if math.isfinite(o.max_abs_error)), default=None)
    rel_err = max((o.max_rel_error for o in checks if math.isfinite(o.max_rel_error)), default=None)
    status_map = {"passed": "passed", "failed": "failed", "crashed": "crashed"}
    failing = test.first_failed_trial
    message = test.summary() if not test.passed else ""
    if failing is not None and failing.failure_message:
        message = f"trial {failing.trial + 1}/{len(test.trials)}: {failing.failure_message}"
    correctness = CorrectnessOutcome(
        status=status_map.get(test.status, "crashed"),  # type: ignore[arg-type]
        trials=len(test.trials),
        passed_trials=sum(1 for t in test.trials if t.passed),
        max_abs_error=abs_err,
        max_rel_error=rel_err,
        message=message,
        traceback=test.traceback or "",
        warnings=test.degenerate,
        cheats=test.cheats,
    )
    timing = None
    if payload.get("timing"):
        timing = TimingResult.from_json(payload["timing"])
    return Evaluation(
        digest,
        CompileOutcome(ok=True),
        correctness,
        timing,
        device=device,
        notes=tuple(m for m in (timing.candidate.warnings if timing else ())),
    )
