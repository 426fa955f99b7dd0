"""`cudalens model FILE[:ENTRY]`: a whole PyTorch model's hot calls, a problem file for the best candidates,
and (with --optimize / --integrate) kernels for them swapped back into the model. docs/model.md."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path

from cudalens.agents.secret_env import secret_names
from cudalens.cli.gpu_options import add_common_arguments
from cudalens.cli.progress import StageProgress
from cudalens.profiler.model_profile import ModelError, profile_model, render_table, split_target


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="FILE[:ENTRY]",
                        help="a file that builds the model and its inputs (ENTRY() returns (model, inputs); "
                        "or KernelBench's Model/get_inputs; or model_and_inputs())")
    parser.add_argument("--device", help="cuda (default when available) or cpu")
    parser.add_argument("--top", type=int, default=15, help="rows of the table (default 15)")
    parser.add_argument("--problems", type=int, default=3,
                        help="write a problem file for this many of the best candidates (default 3; 0: none)")
    parser.add_argument("--out", help="where problems and the integration module go (default .cudalens/model/STEM)")
    parser.add_argument("--iters", type=int, default=5, help="profiled forwards (default 5)")
    parser.add_argument("--warmup", type=int, default=2, help="forwards before profiling (default 2)")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", help=argparse.SUPPRESS)
    add_common_arguments(parser, timeout=600.0, reference=False)


def _fail(message: str) -> int:
    print(f"cudalens model: {message}", file=sys.stderr)
    return 2


def out_dir(args: argparse.Namespace, path: str) -> Path:
    return Path(args.out) if args.out else Path(".cudalens") / "model" / Path(path).stem


def run(args: argparse.Namespace) -> int:
    path, entry = split_target(args.target)
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
            out_dir=str(out_dir(args, path)) if args.problems else None, problems=args.problems,
            iters=args.iters, warmup=args.warmup, on_progress=progress,
            env={name: "" for name in secret_names((args.api_key_env,))},
        )
    except ModelError as exc:
        return _fail(str(exc))
    finally:
        progress.clear()
    if args.format == "json":
        print(json.dumps({"version": 1, **asdict(profile)}, indent=2))
    else:
        print(render_table(profile, args.top))
    return 0
