"""`cudalens optimize FILE`: run the Coder–Judge loop on a KernelBench-style file from the terminal.

The best candidate goes to a new file (`<name>.optimized.py`, or `--output`), or to stdout as a diff (`--diff`);
the input is only rewritten with `--in-place`. Progress and the summary go to stderr.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path

from cudalens.agents.coder.settings import CoderSettings
from cudalens.agents.gpu_specs import KNOWN_GPUS, gpu_by_name
from cudalens.agents.machine_failures import machine_problem
from cudalens.agents.optimize_loop import LoopProgress
from cudalens.agents.optimize_run import OptimizeRun, OptimizeSpec
from cudalens.agents.optimize_settings import OptimizeSettings
from cudalens.agents.profiler_evaluator import ProfilerEvaluatorSettings
from cudalens.agents.search.policies import POLICIES
from cudalens.agents.search.ray_backend import RaySettings, RayUnavailable
from cudalens.profiler.gpu_specs import detect_gpu
from cudalens.worker.child.results import BASELINES
from cudalens.worker.settings import WorkerSettings


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", help="a KernelBench-style Python file (Model, get_inputs, optionally ModelNew)"
    )
    parser.add_argument("--kernel", help="the kernel to optimize (default: the file's model)")
    parser.add_argument("--rounds", type=int, default=OptimizeSettings.rounds,
                        help=f"Coder rounds (default {OptimizeSettings.rounds}; 0: evaluate the file only)")
    parser.add_argument("--budget", type=float, default=OptimizeSettings.budget_usd, metavar="USD",
                        help=f"stop once the Coder has cost this much (default {OptimizeSettings.budget_usd}; 0: no "
                        "limit; the cost needs --price-in/--price-out)")
    parser.add_argument("--budget-tokens", type=int, metavar="N", help="stop after this many tokens")
    parser.add_argument("--patience", type=int, default=OptimizeSettings.patience,
                        help=f"stop after N rounds without progress (default {OptimizeSettings.patience})")
    parser.add_argument("--repair-only", action="store_true", help="stop as soon as a candidate is correct")
    parser.add_argument("--budget-seconds", type=float, metavar="S", help="stop every branch after S seconds")
    search = parser.add_argument_group("search (docs/optimize.md#search)")
    search.add_argument(
        "--search", choices=POLICIES, default="chain",
        help="chain: one candidate at a time from the last (CudaForge's loop); beam: the best K correct "
        "candidates, each with the Judge's different methods; tree: UCT over the candidate tree",
    )
    search.add_argument(
        "--ray", metavar="ADDRESS",
        help="run the evaluations in Ray actors (num_gpus=1 each) on this Ray cluster (needs cudalens[ray] here and "
        "cudalens with torch on its nodes)",
    )
    search.add_argument(
        "--width", type=int, default=None, metavar="K",
        help="candidates in flight at once, and beam's size (default 1 for chain, 4 otherwise)",
    )
    out = parser.add_mutually_exclusive_group()
    out.add_argument("-o", "--output", help="where to write the best candidate (default: FILE.optimized.py)")
    out.add_argument("--diff", action="store_true", help="print the best candidate as a unified diff")
    out.add_argument("--in-place", action="store_true", help="overwrite FILE with the best candidate")
    coder = parser.add_argument_group("Coder endpoint (any OpenAI-compatible chat API)")
    coder.add_argument("--base-url", help="e.g. http://localhost:8000/v1 (default: api.openai.com)")
    coder.add_argument("--coder-model", default=CoderSettings.model, metavar="NAME",
                       help=f"the model the endpoint runs (default {CoderSettings.model}; `cudalens model` takes the "
                       "same flag)")
    # The first spelling, before `cudalens model` took the flag: still read, no longer shown.
    coder.add_argument("--model", dest="coder_model", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    coder.add_argument(
        "--api-key-env",
        default=CoderSettings.api_key_env,
        help="NAME of the environment variable holding the key",
    )
    coder.add_argument("--temperature", type=float)
    coder.add_argument("--reasoning-effort", choices=("low", "medium", "high"))
    coder.add_argument("--coder-timeout", type=float, default=CoderSettings.timeout_seconds, metavar="S")
    coder.add_argument("--retries", type=int, default=CoderSettings.retries)
    coder.add_argument("--stream", action="store_true", help="stream the Coder's replies")
    coder.add_argument("--price-in", type=float, default=CoderSettings.price_in_per_1k, metavar="USD",
                       help="per 1000 prompt tokens")
    coder.add_argument("--price-out", type=float, default=CoderSettings.price_out_per_1k, metavar="USD",
                       help="per 1000 completion tokens")
    worker = parser.add_argument_group("evaluation")
    worker.add_argument(
        "--evaluator",
        choices=("profiler", "isolated"),
        default="profiler",
        help="profiler: one worker for the run (torch loaded once); isolated: a fresh worker per candidate "
        "(nothing a candidate leaves in the process reaches the next; ≈ 3–4 s more a round). Both test, time "
        "and profile the same way",
    )
    worker.add_argument("--worker-python", default=WorkerSettings.python, help="interpreter with torch (and CUDA)")
    worker.add_argument("--timeout", type=float, default=WorkerSettings.timeout_seconds, metavar="S",
                        help="per candidate evaluation")
    worker.add_argument(
        "--ncu", default=None,
        help="Nsight Compute CLI (default: $CUDALENS_NCU, then ncu on PATH and in the CUDA toolkit)",
    )
    worker.add_argument("--no-profile", action="store_true", help="do not profile candidates with ncu")
    worker.add_argument("--baseline", choices=BASELINES, default="eager",
                        help="what the search must beat: eager PyTorch (default) or torch.compile(reference)")
    worker.add_argument(
        "--gpu",
        default="auto",
        help=f"specs for the Judge and prompts: auto (this machine's), {', '.join(KNOWN_GPUS)}",
    )
    worker.add_argument(
        "--allow-torch-ops",
        action="store_true",
        help="accept candidates without a CUDA kernel whose ModelNew uses PyTorch ops",
    )
    parser.add_argument(
        "--runs-dir", default=".cudalens/runs", help="where run logs go (default .cudalens/runs)"
    )
    parser.add_argument("-q", "--quiet", action="store_true")


def _fail(message: str) -> int:
    print(f"cudalens optimize: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        source = path.read_text(encoding="utf-8")
    except OSError as exc:
        return _fail(f"cannot read {path}: {exc.strerror or exc}")
    if path.suffix != ".py" or "class Model" not in source or "def get_inputs" not in source:
        return _fail(
            f"{path} is not a KernelBench-style Python file (it needs class Model and get_inputs(); "
            ".cu files need a PyTorch reference file)"
        )
    if shutil.which(args.worker_python) is None:
        return _fail(f"the worker interpreter {args.worker_python} was not found (--worker-python)")
    if args.rounds < 0:
        return _fail("--rounds must be at least 0")
    width = args.width if args.width is not None else 1 if args.search == "chain" else 4
    if width < 1 or (args.search == "chain" and width != 1):
        return _fail("--width must be at least 1 (and 1 with --search chain)")
    coder_settings = CoderSettings(
        base_url=args.base_url or "",
        model=args.coder_model,
        api_key_env=args.api_key_env,
        temperature=args.temperature,
        reasoning_effort=args.reasoning_effort,
        timeout_seconds=args.coder_timeout,
        retries=args.retries,
        stream=args.stream,
        price_in_per_1k=args.price_in,
        price_out_per_1k=args.price_out,
    )
    if args.rounds > 0 and coder_settings.api_key() is None:
        return _fail(
            f"set the environment variable {args.api_key_env} to the Coder's API key "
            "(or name another with --api-key-env; an endpoint on this machine needs none)"
        )
    if (why := machine_problem(str(path), source, args.allow_torch_ops, detect_gpu())) is not None:
        return _fail(why.removeprefix("cudalens: "))  # before anything is compiled or sent
    settings = OptimizeSettings(
        rounds=args.rounds, budget_usd=args.budget, patience=args.patience, allow_torch_ops=args.allow_torch_ops
    ).loop(repair_only=args.repair_only, budget_tokens=args.budget_tokens)
    settings = replace(settings, budget_seconds=args.budget_seconds, search=args.search, width=width)
    if args.ncu:
        os.environ["CUDALENS_NCU"] = args.ncu  # where the profiler looks for it (profiler/ncu/locate.py)
    spec = OptimizeSpec(
        str(path),
        source,
        args.kernel,
        coder_settings,
        settings,
        ProfilerEvaluatorSettings(
            python=args.worker_python,
            timeout_s=args.timeout,
            profile=not args.no_profile,
            fresh_worker=args.evaluator == "isolated",
            baseline=args.baseline,
        ),
        gpu=None if args.gpu == "auto" else gpu_by_name(args.gpu),
        runs_dir=Path(args.runs_dir),
        ray=RaySettings(args.ray) if args.ray else None,
    )

    def on_progress(p: LoopProgress) -> None:
        if not args.quiet and p.phase != "done":  # the summary is printed below
            best = f" (best {p.best_speedup:.2f}×)" if p.best_speedup else ""
            print(f"{p.message}{best}", file=sys.stderr)  # it says "round k/N: ..."

    try:
        run = OptimizeRun(spec, on_progress)
    except RayUnavailable as exc:
        return _fail(str(exc).removeprefix("cudalens: "))
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is threading.main_thread():
        # Ctrl-C: stop after killing the candidates in flight
        signal.signal(signal.SIGINT, lambda *_: run.loop.cancel.set())
    try:
        result = run.run()
    finally:
        run.close()
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, previous)
    against = "" if args.baseline == "eager" else "; speedups against torch.compile of the reference"
    print(f"cudalens optimize: {result.summary_line()}{against}", file=sys.stderr)
    if not args.quiet:
        print(f"cudalens optimize: search tree ({result.search}):\n{result.tree()}", file=sys.stderr)
    if result.run_dir is not None:
        print(f"cudalens optimize: run log in {result.run_dir}", file=sys.stderr)
    if not result.improved or result.best_source is None:
        return 1
    if args.diff:
        sys.stdout.writelines(
            difflib.unified_diff(
                source.splitlines(keepends=True),
                result.best_source.splitlines(keepends=True),
                f"a/{path.name}",
                f"b/{path.name}",
            )
        )
        return 0
    target = (
        path if args.in_place else Path(args.output) if args.output else path.with_suffix(".optimized.py")
    )
    target.write_text(result.best_source, encoding="utf-8")
    print(f"cudalens optimize: wrote {target}", file=sys.stderr)
    return 0
