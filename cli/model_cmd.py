"""`cudalens model FILE[:ENTRY]`: a whole PyTorch model's hot calls, a problem file for the best candidates,
and (with --optimize / --integrate) kernels for them swapped back into the model. docs/model.md."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from cudalens.cli.gpu_options import add_common_arguments
from cudalens.cli.progress import StageProgress
from cudalens.model.profile import ModelError, profile_model, render_table, split_target
from cudalens.model.verify import integrate
from cudalens.model.verify import render as render_integration
from cudalens.profiler import child_env
from cudalens.worker.child.results import BASELINES
from cudalens.workspace.state import ignored


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="FILE[:ENTRY]",
                        help="a file that builds the model and its inputs (ENTRY() returns (model, inputs); "
                        "or KernelBench's Model/get_inputs; or model_and_inputs())")
    parser.add_argument("--device", help="cuda (default when available) or cpu")
    parser.add_argument("--top", type=int, default=15, help="rows of the table (default 15)")
    parser.add_argument("--problems", type=int, default=3,
                        help="write a problem file for this many of the best candidates (default 3; 0: none)")
    parser.add_argument("--problem", action="append", default=[], metavar="NAME",
                        help="also write problems for the calls of this function (group_norm), whatever their rank")
    parser.add_argument("--out", help="where problems and the integration module go (default .cudalens/model/STEM)")
    parser.add_argument("--iters", type=int, default=5, help="profiled forwards (default 5)")
    parser.add_argument("--warmup", type=int, default=2, help="forwards before profiling (default 2)")
    kernels = parser.add_argument_group("kernels for the problems (docs/model.md)")
    kernels.add_argument("--optimize", type=int, default=0, metavar="N",
                         help="run `cudalens optimize` on the first N problems, then --integrate")
    kernels.add_argument("--integrate", action="store_true",
                         help="do not profile: test the candidates beside the problems in --out (NAME.optimized.py), "
                         "swap those that pass into the model, verify its outputs and time it before/after")
    kernels.add_argument("--no-compile", action="store_true", help="time eager mode only, not torch.compile")
    kernels.add_argument("--atol", type=float, help="whole-model tolerance (default by dtype)")
    kernels.add_argument("--rtol", type=float, help="whole-model tolerance (default as --atol)")
    kernels.add_argument("--allow-torch-ops", action="store_true",
                         help="accept candidates that use PyTorch ops beside (or instead of) a kernel")
    coder = parser.add_argument_group("the Coder, for --optimize (as `cudalens optimize` takes it)")
    coder.add_argument("--rounds", type=int, default=10)
    coder.add_argument("--budget", type=float, metavar="USD")
    coder.add_argument("--base-url")
    coder.add_argument("--coder-model", metavar="NAME", help="the model the endpoint runs (as `cudalens optimize "
                       "--coder-model`)")
    coder.add_argument("--api-key-env", default="OPENAI_API_KEY")
    coder.add_argument("--no-profile", action="store_true", help="the loop profiles no candidate with ncu")
    coder.add_argument("--baseline", choices=BASELINES, default="eager",
                       help="what the loop's kernels must beat: eager PyTorch (default) or torch.compile; "
                       "--integrate decides each mode against its own either way")
    add_common_arguments(parser, timeout=600.0, reference=False)


def _fail(message: str) -> int:
    print(f"cudalens model: {message}", file=sys.stderr)
    return 2


def out_dir(args: argparse.Namespace, path: str) -> Path:
    return ignored(Path(args.out) if args.out else Path(".cudalens") / "model" / Path(path).stem)


def run(args: argparse.Namespace) -> int:
    child_env.hide(args.api_key_env)  # the Coder's key, whatever its name, reaches no model, test or candidate
    path, entry = split_target(args.target)
    if args.optimize < 0:
        return _fail("--optimize must be at least 0")
    if args.integrate:
        return _integrate(args, path, entry)
    for name in ("top", "iters"):
        if getattr(args, name) < 1:
            return _fail(f"--{name} must be at least 1")
    if args.problems < 0 or args.warmup < 0:
        return _fail("--problems and --warmup must be at least 0")
    progress = StageProgress(f"model {Path(path).name}")
    progress("starting the worker", 0.0)
    try:
        profile = profile_model(
            path, entry, device=args.device, python=args.python, timeout_s=args.timeout,
            out_dir=str(out_dir(args, path)) if args.problems or args.problem else None, problems=args.problems,
            names=tuple(args.problem),
            iters=args.iters, warmup=args.warmup, on_progress=progress,
        )
    except ModelError as exc:
        return _fail(str(exc))
    finally:
        progress.clear()
    if args.format == "json" and not args.optimize:
        print(json.dumps({"version": 1, **asdict(profile)}, indent=2))
    else:
        print(render_table(profile, args.top), file=sys.stderr if args.format == "json" else sys.stdout)
    if not args.optimize:
        return 0
    for problem in profile.problems[: args.optimize]:
        _optimize(args, problem)
    return _integrate(args, path, entry)


def _optimize(args: argparse.Namespace, problem: str) -> int:
    """`cudalens optimize PROBLEM`: the loop through its command line, so that this command depends on what a
    user can type and nothing more (the best candidate lands beside the problem, NAME.optimized.py)."""
    from cudalens.cli.main import main

    argv = ["optimize", problem, "--rounds", str(args.rounds), "--api-key-env", args.api_key_env,
            "--worker-python", args.python, "--timeout", str(args.timeout), "--baseline", args.baseline]
    for flag, value in (("--budget", args.budget), ("--base-url", args.base_url), ("--coder-model", args.coder_model)):
        if value is not None:
            argv += [flag, str(value)]
    argv += [flag for flag, on in (("--allow-torch-ops", args.allow_torch_ops), ("--no-profile", args.no_profile)) if on]
    print(f"cudalens model: optimizing {problem}", file=sys.stderr)
    return main(argv)


def _integrate(args: argparse.Namespace, path: str, entry: str | None) -> int:
    progress = StageProgress(f"integrate {Path(path).name}")
    try:
        result = integrate(
            path, entry, out_dir(args, path), device=args.device, python=args.python, timeout_s=args.timeout,
            compile=not args.no_compile, allow_torch_ops=args.allow_torch_ops, atol=args.atol, rtol=args.rtol,
            on_progress=progress,
        )
    except ModelError as exc:
        return _fail(str(exc))
    finally:
        progress.clear()
    if args.format == "json":
        print(json.dumps({"version": 1, "integration": result.to_json(), "passed": result.passed}, indent=2))
    else:
        print(render_integration(result))
        print(f"the page: cudalens report {out_dir(args, path)}")
    return 0 if result.passed else 1
