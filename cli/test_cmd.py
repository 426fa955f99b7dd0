"""`cudalens test FILE`: the file's correctness test against its PyTorch reference, then (with --time) its
timing against PyTorch, run in the worker. Exit 0 when it passed, 1 when it did not, 2 on a usage error."""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cudalens.analysis.file_kinds import builds_cuda
from cudalens.cli.gpu_options import add_common_arguments, existing_file
from cudalens.cli.progress import StageProgress
from cudalens.profiler.gpu_specs import NoGpu, detect_gpu
from cudalens.profiler.reverify import reverification, verified
from cudalens.worker import warm
from cudalens.worker.child.protocol import JobResult
from cudalens.worker.child.results import BASELINES, TestResult, TimingResult
from cudalens.worker.run_job import run_job


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a KernelBench .py (Model + ModelNew) or a .cu with a reference")
    parser.add_argument("--trials", type=int, default=5, help="trials with fresh seeded inputs (default 5)")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--atol", type=float, help="absolute tolerance (default by dtype: fp32 1e-4, fp16/bf16 1e-2)")
    parser.add_argument("--rtol", type=float, help="relative tolerance (default as --atol)")
    parser.add_argument("--precision", choices=("float32", "float16", "bfloat16"),
                        help="cast float inputs and both models to this dtype (KernelBench's --precision)")
    parser.add_argument("--time", action="store_true", help="time against PyTorch when the test passes")
    parser.add_argument("--compile-reference", action="store_true", help="also time torch.compile(reference)")
    parser.add_argument("--baseline", choices=BASELINES, default="eager",
                        help="what the speedup and the verdicts are against: eager PyTorch (default) or "
                        "torch.compile(reference) (timed then)")
    parser.add_argument("--budget-ms", type=float, default=100.0, help="timing budget per side in ms")
    parser.add_argument("--device", help="cuda (default when available) or cpu")
    parser.add_argument("--allow-torch-ops", action="store_true",
                        help="let ModelNew use PyTorch's ops beside its kernel (the anti-cheat check CL907 otherwise fails it)")
    parser.add_argument("--warm", action="store_true",
                        help="reuse this terminal session's warm worker (torch imported, the CUDA context made), "
                        "starting it if there is none; it exits after 15 idle minutes or with the session")
    add_common_arguments(parser, timeout=600.0)


def run(args: argparse.Namespace) -> int:
    path = existing_file("test", args.file)
    if path is None:
        return 2
    if args.trials < 1:
        print("cudalens test: --trials must be at least 1", file=sys.stderr)
        return 2
    text = path.read_text(encoding="utf-8", errors="replace")
    if builds_cuda(str(path), text) and args.device != "cpu" and isinstance(gpu := detect_gpu(), NoGpu):
        from cudalens.profiler.run_findings import no_gpu_message

        print(no_gpu_message("testing", path.name, gpu.reason), file=sys.stderr)  # the editor's words
        return 2
    payload = {
        "path": str(path.resolve()), "reference": args.reference and str(Path(args.reference).resolve()), "trials": args.trials, "seed": args.seed,
        "atol": args.atol, "rtol": args.rtol, "precision": args.precision, "time": args.time, "compile_reference": args.compile_reference,
        "baseline": args.baseline,
        "budget_ms": args.budget_ms, "device": args.device, "allow_torch_ops": args.allow_torch_ops,
    }
    progress = StageProgress(f"test {path.name}")
    progress("starting the worker", 0.0)
    # the analyzer (a third of a second to import, numpy with it) loads and reads the file while the job runs
    analysis = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cudalens-test-analysis")
    kernels_of = analysis.submit(_kernels, str(path), text)
    analysis.shutdown(wait=False)
    try:
        outcome = _run_test(payload, args, progress)
        if reverification(outcome, payload) is not None:
            progress("re-verifying a speedup above 10× in a fresh process", None)
        outcome = verified(outcome, payload, timeout_s=args.timeout, python=args.python)
    finally:
        progress.clear()
    from cudalens.profiler.run_findings import outcome_findings, timing_findings

    kernels = kernels_of.result()
    findings = outcome_findings(str(path), text, outcome, kernels)
    test = TestResult.from_json(outcome.payload["test"]) if outcome.payload.get("test") else None
    timing = TimingResult.from_json(outcome.payload["timing"]) if outcome.payload.get("timing") else None
    if timing is not None:
        findings += timing_findings(str(path), text, timing, kernels)
    if args.format == "json":
        print(json.dumps({
            "version": 1, "status": outcome.status,
            "test": None if test is None else test.to_json(),
            "timing": None if timing is None else timing.to_json(),
            "findings": [f.to_json() for f in findings],
        }, indent=2))
    else:
        print(render(str(path), test, timing, findings))
    return 0 if test is not None and test.passed and not any(f.severity.rank >= 2 for f in findings) else 1


def _kernels(path: str, text: str) -> list:
    import cudalens.profiler.run_findings  # noqa: F401 - imported here, beside the job, for the findings after it
    from cudalens.analysis.api import analyze_text

    return analyze_text(path, text).kernels


def _run_test(payload: dict, args: argparse.Namespace, progress: StageProgress) -> JobResult:
    """The test job: on the session's warm worker with --warm (a worker of its own where none can serve)."""
    if args.warm:
        try:
            def gpu() -> bool:  # nvidia-smi, asked only when a warm worker has to start
                return args.device != "cpu" and not isinstance(detect_gpu(), NoGpu)

            return warm.run_job("test", payload, timeout_s=args.timeout, python=args.python, gpu=gpu,
                                on_progress=progress)
        except warm.WarmUnavailable as exc:
            progress.clear()
            print(f"cudalens test: no warm worker ({exc}): a worker for this run alone", file=sys.stderr)
    return run_job("test", payload, timeout_s=args.timeout, python=args.python, on_progress=progress)


def render(path: str, test: TestResult | None, timing: TimingResult | None, findings: list) -> str:
    lines = []
    if test is not None:
        verdict = test.summary() if test.passed else f"{test.status}: {test.message}"
        lines.append(f"{path}: {verdict}" + (f" on {test.device}" if test.device else ""))
        for t in test.trials:
            state = "ok" if t.passed else (t.failure_message or "failed")
            lines.append(f"  trial {t.trial} ({t.inputs_text}): {state}")
        if test.limits is not None:
            lines.append(f"  time limit of a candidate call: {test.limits.describe()}")
    if timing is not None:
        lines.append(f"  {timing.candidate.describe()}")
        lines.append(f"  {timing.reference.describe()}")
        if timing.compiled_reference is not None:
            lines.append(f"  {timing.compiled_reference.describe()}")
        lines.append(f"  speedup over {timing.baseline_name}: {timing.describe_speedup()}")
        for w in timing.candidate.warnings + timing.baseline_timing.warnings:
            lines.append(f"  warning: {w}")
    for f in findings:
        lines.append(f"{f.path}:{f.span.line}:{f.span.column}: {f.code} {f.message}")
    return "\n".join(lines)
