"""The full optimize loop on three KernelBench level-1 problems, on a GPU, with a scripted Coder.

For each problem the local OpenAI-compatible server replays three candidates (a wrong kernel, a slow correct
one, a fast correct one); the loop must end on the fast one. Prints each round's outcome and the per-round
overhead outside the LLM (compile + test + time in the worker; goal ≤ 15 s), cold build vs cached build.

    python benchmarks/gpu_optimize_loop.py [--out DIR] [--problems 19_ReLU,...] [--rounds 3]

Exit status 0 when every problem ends on its fast candidate, 1 otherwise.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from optimize_problems import PROBLEMS, reference_file  # noqa: E402

from cudalens.agents.coder.client import CoderClient  # noqa: E402
from cudalens.agents.coder.settings import CoderSettings  # noqa: E402
from cudalens.agents.gpu_specs import gpu_by_name  # noqa: E402
from cudalens.agents.optimize_loop import LoopSettings, OptimizeLoop  # noqa: E402
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings  # noqa: E402
from cudalens.agents.resources import WithCompileResources  # noqa: E402
from cudalens.analysis.api import analyze_text  # noqa: E402
from tests.agents.fake_openai import FakeOpenAI, reply  # noqa: E402


def fenced(source: str) -> str:
    return f"Here is the new kernel.\n\n```python\n{source}```\n"


def device_name() -> str | None:
    try:
        import torch

        return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    except Exception:
        return None


def make_evaluator(args: argparse.Namespace, problem) -> ProfilerEvaluator:
    return ProfilerEvaluator(
        reference_file(problem),
        ProfilerEvaluatorSettings(
            timeout_s=args.timeout, profile=not args.no_ncu, secret_env=("CUDALENS_BENCH_KEY",),
            ncu_standby=not args.no_ncu_standby, fresh_worker=args.evaluator == "isolated",
        ),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--out", default=None, help="folder for run logs and the build cache (default: a temp dir)"
    )
    ap.add_argument("--problems", default=",".join(p.name for p in PROBLEMS))
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--ncu", default=shutil.which("ncu"), help="Nsight Compute CLI for measured verdicts")
    ap.add_argument("--no-ncu", action="store_true", help="skip profiling (overhead without ncu)")
    ap.add_argument("--no-ncu-standby", action="store_true",
                    help="profile in a fresh ncu per round instead of a warm target (profiler/ncu/standby.py)")
    ap.add_argument(
        "--evaluator",
        choices=("profiler", "isolated"),
        default="profiler",
        help="one worker for the run (default) or a fresh worker per candidate",
    )
    args = ap.parse_args()
    name = device_name()
    if name is None:
        print("gpu_optimize_loop: no CUDA device visible to torch; nothing to measure", file=sys.stderr)
        return 2
    out = Path(args.out or tempfile.mkdtemp(prefix="cudalens-bench-"))
    if args.ncu:
        os.environ["CUDALENS_NCU"] = args.ncu  # where the profiler looks for it
    os.environ["CUDALENS_BENCH_KEY"] = "sk-bench-not-a-real-key"
    gpu = gpu_by_name(name)
    print(f"device: {name}; specs used by the Judge/prompts: {gpu.name}; logs in {out}")
    print(f"evaluator: {args.evaluator}; ncu: {'off' if args.no_ncu else (args.ncu or 'not found')}")
    chosen = [p for p in PROBLEMS if p.name in args.problems.split(",")]
    ok = True
    all_warm: list[float] = []
    for problem in chosen:
        script = [reply(fenced(problem.wrong)), reply(fenced(problem.slow)), reply(fenced(problem.fast))]
        with FakeOpenAI(script) as fake:
            coder = CoderClient(
                CoderSettings(
                    base_url=fake.base_url,
                    model="scripted",
                    api_key_env="CUDALENS_BENCH_KEY",
                    price_in_per_1k=0.002,
                    price_out_per_1k=0.008,
                )
            )
            evaluator = make_evaluator(args, problem)
            evaluator = WithCompileResources(evaluator, f"{problem.name}.py")
            loop = OptimizeLoop(
                evaluator,
                coder,
                reference_file(problem),
                kernel=problem.name,
                gpu=gpu,
                settings=LoopSettings(rounds=3, patience=5),
                run_root=out / "runs",
                findings_for=lambda src, name=problem.name: analyze_text(f"{name}.py", src).findings,
            )
            t0 = time.perf_counter()
            try:
                result = loop.run(problem.start)
            finally:
                close = getattr(evaluator.inner, "close", None)
                if close:
                    close()
            wall = time.perf_counter() - t0
        print(f"\n== {problem.name}: {result.summary_line()} ({wall:.1f} s wall)")
        print(
            f"   {'round':>5} {'kind':>9} {'status':>9} {'speedup':>8} {'eval s':>7} {'build+import s':>14} "
            f"{'LLM s':>6}  verdict"
        )
        for r in result.rounds:
            ev = r.evaluation
            status = (
                "rejected"
                if r.evaluation is None and r.source
                else (
                    "correct"
                    if ev and ev.correct
                    else (ev.correctness.status if ev and ev.compile.ok else "no-build")
                )
            )
            speed = f"{r.speedup:.2f}x" if r.speedup else "-"
            build = f"{ev.compile.seconds:.1f}" if ev else "-"
            print(
                f"   {r.index:>5} {r.kind:>9} {status:>9} {speed:>8} {r.seconds_eval:>7.1f} {build:>14} "
                f"{r.seconds_llm:>6.2f}  {r.verdict.summary if r.verdict else r.error}"
            )
            for built in ev.compile.kernels if ev else ():
                k, o = built.resources, built.occupancy
                occ = f"{o.fraction:.0%} ({o.limiter})" if o else "?"
                print(f"         {k.short_name}: {k.registers} regs, {k.shared_static_bytes} B smem, occupancy {occ}")
            for p in ev.profiles if ev else ():
                print(f"         ncu {p.kernel}: {len(p.metrics)} metrics")
            if ev and (ev.stages or ev.builds):
                stages = ", ".join(f"{name} {secs:.1f} s" for name, secs in ev.stages)
                print(f"         time: {stages}; build: {'; '.join(b[:90] for b in ev.builds) or 'cached'}")
            for note in ev.notes if ev else ():
                print("         note: " + note.strip().splitlines()[-1][:200])
            if ev and not ev.correct and (ev.compile.log or ev.correctness.traceback):
                print(
                    "         " + (ev.compile.log or ev.correctness.traceback).strip().splitlines()[-1][:200]
                )
        evals = [r.seconds_eval for r in result.rounds if r.evaluation is not None]
        warm = evals[1:]
        all_warm += warm
        print(
            f"   per-round overhead excluding the LLM: round 0 (cold build) {evals[0]:.1f} s; later rounds "
            f"median {statistics.median(warm) if warm else float('nan'):.1f} s, max {max(warm, default=0):.1f} s"
        )
        fast_round = len(result.rounds) - 1
        if result.best_round != fast_round or result.best_source != problem.fast:
            print(
                f"   FAIL: expected the fast candidate (round {fast_round}) to win, got round {result.best_round}"
            )
            ok = False
        else:
            print(f"   ends on the fast candidate: {result.best_speedup:.2f}x vs PyTorch")
    if all_warm:
        print(
            f"\nall problems: median per-round overhead (cached builds, excluding the LLM) "
            f"{statistics.median(all_warm):.1f} s (goal <= 15 s; CudaForge ~122 s before its LLM call)"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
