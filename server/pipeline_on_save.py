"""What a save runs: compile → test → time → profile for one version of one document, off the event loop.

Plain asyncio, no LSP: the caller passes how to report progress and how to tell the user something once.
Each step is cancellable: cancelling the task kills nvcc (compile), the job's process group (test, time) or
ncu (profile). A step that needs a GPU on a machine without one is skipped, and the user is told once.

The steps' own modules (the compiler's findings, ncu, the run findings, re-verification: ≈ 0.2 s of imports) are
imported by the steps: the server's start, which imports this module, does not wait for them
(tests/server/test_start_imports.py).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cudalens.analysis.api import KernelInfo
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.file_kinds import builds_cuda
from cudalens.analysis.findings import Finding
from cudalens.analysis.positions import split_lines
from cudalens.profiler import processes
from cudalens.profiler.gpu_specs import NoGpu
from cudalens.server.gpu_runtime import GpuRuntime, start_failure
from cudalens.server.settings import OnSave
from cudalens.worker.child.protocol import JobResult, seconds_text
from cudalens.worker.settings import WorkerSettings

if TYPE_CHECKING:
    from cudalens.profiler.compile_findings import CompileReport
    from cudalens.profiler.ncu.profile import ProfileRequest
    from cudalens.worker.child.results import NcuProfile, TestResult, TimingResult

logger = logging.getLogger("cudalens.server")

Report = Callable[[str, "int | None"], None]  # (message, percentage)
SayOnce = Callable[[str], None]


@dataclass(frozen=True)
class Plan:
    compile: bool = False
    test: bool = False
    time: bool = False
    profile: bool = False

    @property
    def anything(self) -> bool:
        return self.compile or self.test or self.time or self.profile


@dataclass(frozen=True)
class SaveJob:
    """One saved version of one document."""

    path: str
    version: int | None
    text: str
    config: AnalysisConfig
    kernels: Sequence[KernelInfo] | None = None  # the analyzer's, for this text, when already known
    profile_kernels: tuple[str, ...] = ()  # profile only these (empty: every kernel of the file)
    roots: tuple[str, ...] | None = None  # the folders nvcc may read headers from (the workspace's)


@dataclass
class LastRun:
    """What the GPU half said about one version: shown as diagnostics (for that version only), hover, lens."""

    version: int | None
    lines: list[str]  # the text the findings' positions refer to
    compile: CompileReport | None = None
    test: TestResult | None = None
    timing: TimingResult | None = None
    profile: NcuProfile | None = None
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # steps that could not run, and why
    outcome: JobResult | None = None  # the test job's, for the Judge
    verdicts: dict[str, str] = field(default_factory=dict)  # kernel → the Judge's verdict, as hover markdown
    diagnostics: list | None = None  # the LSP form, made once

    @property
    def ncu_hints(self) -> list[Finding]:
        return [f for f in self.findings if f.code == "CL904"]


def plan_for(on_save: OnSave, path: str, text: str) -> Plan:
    """The steps that make sense for this file: a test needs something to test, timing a test."""
    cuda = builds_cuda(path, text)
    testable = bool(on_save.test or on_save.time or on_save.profile) and _has_test(path, text)
    return Plan(
        compile=on_save.compile and cuda,
        test=testable and (on_save.test or on_save.time),
        time=testable and on_save.time,
        profile=testable and on_save.profile and cuda,
    )


def _has_test(path: str, text: str) -> bool:
    from cudalens.profiler.run_findings import has_test

    return has_test(path, text)


def builds_ahead(on_save: OnSave, path: str, text: str) -> bool:
    """A `.cu` file that its save would test: built when it opens (build_ahead)."""
    return Path(path).suffix.lower() == ".cu" and plan_for(on_save, path, text).test


async def build_ahead(path: str, runtime: GpuRuntime, worker: WorkerSettings) -> None:
    """A file `builds_ahead` chose: its extension built in the worker now (the `build` job: a compile, nothing of
    the user's run), so that the first save finds the bindings (≈ 15 s on the H200) and the precompiled header
    done. A save meanwhile waits for it in the worker's queue, and finds it built. The caller checks for a GPU."""
    if not Path(path).is_file():
        return
    outcome = await runtime.run(worker, "build", {"path": path})
    said = outcome.payload if outcome.status == "ok" else ((outcome.error or "").strip().splitlines() or [outcome.status])[-1]
    logger.info("built %s ahead of its first save: %s", Path(path).name, said)


def _no_gpu_message(reason: str) -> str:
    return (f"cudalens: no GPU here ({reason}); testing, timing and profiling CUDA code on save are skipped "
            "(compiling still runs)")


async def run_on_save(
    job: SaveJob, plan: Plan, runtime: GpuRuntime, worker: WorkerSettings, report: Report, say_once: SayOnce,
) -> LastRun:
    """Compile and test run side by side (nvcc here, the build of the test in the worker), so a save waits for
    the slower of the two, not both; a compile error cancels the test. The profile follows a passing test."""
    from cudalens.profiler.ncu.line_hints import line_findings
    from cudalens.profiler.ncu.profile import prepare_standby
    from cudalens.profiler.reverify import reverification, reverified

    run = LastRun(job.version, split_lines(job.text))

    def note(message: str) -> None:
        run.notes.append(message)
        say_once(message)

    compiling = asyncio.ensure_future(_compile(job)) if plan.compile else None
    testing: asyncio.Future | None = None
    try:
        if plan.compile:
            report("compiling", 0)
        if (plan.test or plan.profile) and await _gpu_missing(job, runtime, note):
            plan = Plan(compile=plan.compile)
        profiling = profile_request(job.path, worker, job.profile_kernels)
        if plan.profile:
            # this save's warm ncu target and the next save's warm up while the test runs
            prepare_standby(profiling, job.path, job.text, count=2)
        if plan.test:
            report("testing" + (" and timing" if plan.time else ""), 10)

            def relay(message: str, fraction: float | None) -> None:
                report(f"testing: {message}", 10 + int(60 * fraction) if fraction is not None else None)

            payload = {"path": job.path, "time": plan.time}
            testing = asyncio.ensure_future(runtime.run(worker, "test", payload, relay))
            tested_from = time.perf_counter()
        if compiling is not None:
            run.compile = await compiling
            if run.compile.skipped:
                note(f"cudalens: compiling is skipped: {run.compile.skipped}")
            run.findings += [f for f in run.compile.findings if f.path == job.path]
            if any(f.code == "CL801" for f in run.compile.findings):
                return run  # nothing to run (the `finally` stops the test)
        if testing is not None:
            outcome = await testing
            if (failed := start_failure(outcome)) is not None:
                note(f"cudalens: the worker could not start ({failed}); check the `worker.python` setting")
                return run
            spent = seconds_text(outcome.payload, "; ")
            logger.info("%s: tested in %.1f s (the worker's queue included%s)", Path(job.path).name,
                        time.perf_counter() - tested_from, spent and f"; {spent}")
            if (again := reverification(outcome, payload)) is not None:
                report("re-verifying a speedup above 10× in a fresh process", 70)
                outcome = reverified(outcome, await runtime.run_fresh(worker, "test", again))
            _take_test(run, job, outcome)
            if run.test is None or not run.test.passed:
                return run
        if plan.profile:
            report("profiling with Nsight Compute", 75)
            run.profile = await profile_async(profiling)
            if run.profile.error:
                note(f"cudalens: profiling {Path(job.path).name} failed: {run.profile.error}")
            run.findings += line_findings(job.path, job.text, run.profile.lines)
        return run
    finally:
        for task in (compiling, testing):
            if task is not None and not task.done():
                task.cancel()


async def _compile(job: SaveJob) -> CompileReport:
    from cudalens.profiler.compile_findings import compile_report_async

    return await compile_report_async(job.path, job.text, job.config, kernels=list(job.kernels or []) or None,
                                      roots=job.roots)


async def _gpu_missing(job: SaveJob, runtime: GpuRuntime, note: Callable[[str], None]) -> bool:
    """True (after telling the user once) when the file has CUDA code to run and there is no GPU."""
    if not builds_cuda(job.path, job.text):
        return False  # pure PyTorch runs on the CPU
    gpu = await runtime.gpu()
    if isinstance(gpu, NoGpu):
        note(_no_gpu_message(gpu.reason))
        return True
    return False


def _take_test(run: LastRun, job: SaveJob, outcome: JobResult) -> None:
    from cudalens.profiler.run_findings import outcome_findings, timing_findings
    from cudalens.worker.child.results import TestResult, TimingResult

    kernels = list(job.kernels) if job.kernels else None
    run.outcome = outcome
    if outcome.payload.get("builds"):  # how its extensions were built ("fast NAME", "declined NAME: why"): the log
        logger.info("%s: %s", Path(job.path).name, "; ".join(outcome.payload["builds"]))
    run.findings += outcome_findings(job.path, job.text, outcome, kernels)
    if outcome.payload.get("test"):
        run.test = TestResult.from_json(outcome.payload["test"])
    if outcome.payload.get("timing"):
        run.timing = TimingResult.from_json(outcome.payload["timing"])
        run.findings += timing_findings(job.path, job.text, run.timing, kernels)


def profile_request(path: str, worker: WorkerSettings, kernels: tuple[str, ...] = ()) -> ProfileRequest:
    """An on-save profile: from a warm ncu target, which the server may start before the first save (its key
    does not depend on the file or its kernels, so that one is the first save's)."""
    from cudalens.profiler.ncu.profile import ProfileRequest

    return ProfileRequest(path, kernels=kernels, python=worker.python, timeout=worker.timeout_seconds, standby=True)


async def profile_async(request: ProfileRequest) -> NcuProfile:
    """`profile_file` in a thread; cancelling kills the running ncu."""
    from cudalens.profiler.ncu.profile import profile_file

    return await processes.in_thread(functools.partial(profile_file, request))


class Pipelines:
    """At most one running pipeline per document: a new save, an edit or a close cancels the running one."""

    def __init__(self) -> None:
        self._tasks: dict[str, asyncio.Task] = {}

    def start(self, uri: str, coro) -> asyncio.Task:
        self.cancel(uri)
        task = asyncio.ensure_future(coro)
        self._tasks[uri] = task
        task.add_done_callback(lambda t: self._tasks.get(uri) is t and self._tasks.pop(uri))
        return task

    def cancel(self, uri: str) -> bool:
        task = self._tasks.pop(uri, None)
        if task is not None and not task.done():
            logger.info("cancelling the on-save run of %s", uri)
            task.cancel()
            return True
        return False

    def running(self, uri: str) -> bool:
        task = self._tasks.get(uri)
        return task is not None and not task.done()

    def cancel_all(self) -> None:
        for uri in list(self._tasks):
            self.cancel(uri)
