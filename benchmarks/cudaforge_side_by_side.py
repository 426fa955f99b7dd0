"""cudalens's evaluation round beside CudaForge's own, on the same candidate, in one run on one GPU (issue 13).

A round is what each tool does with one candidate before it asks the LLM again:
- CudaForge (OptimAI-Lab/CudaForge main.py: `_bench_and_score`, then its optimisation branch): `compare_and_bench`
  in a fresh process (build, correctness, 5 warm-up and 20 timed calls of both models), then `profile_bench` (ncu
  with kernel replay over its `bench_ref_inputs_0.py --repeat 100`, the first 20 launches, its 24 metrics) and
  `load_ncu_metrics` for the candidate's kernel.
- cudalens: the loop's evaluator, `ProfilerEvaluator.evaluate` (build, the correctness test with its anti-cheat
  checks, adaptive timing, the ncu profile with per-line counters), as `cudalens optimize` runs it.
Both take the same 25_Swish candidate at KernelBench's size (4096×393216). Round 1 starts from empty build
caches; round 2 takes a new candidate (another comment in its CUDA source, so that both rebuild, as in every
round of a loop).

    python benchmarks/cudaforge_side_by_side.py [--cudaforge .cudaforge] [--rows 4096 --cols 393216]

`--cudaforge`: a folder with CudaForge's `utils/compile_and_run.py`, `run_ncu.py` and `bench_ref_inputs_0.py`,
fetched and never committed (`.cudaforge/` is git-ignored; copy them from a checkout of OptimAI-Lab/CudaForge).
CudaForge calls ncu with its default clock control, which this lent H200 refuses; the `ncu` it finds first on
PATH here adds `--clock-control none`, as cudalens's own profiles do, and changes nothing else.

Prints each round's seconds for both and the ratio (goal: cudalens's round at least 8× faster). Exit status 0
when both evaluated every round and agreed that the candidate is correct, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from cudalens.agents.optimize_run import OptimizeSpec, devices_for, local_evaluator  # noqa: E402
from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings  # noqa: E402

swish_file = runpy.run_path(str(ROOT / "benchmarks" / "swish_cases.py"))["swish_file"]

KERNEL = "swish_kernel"
# CudaForge's round, as its main.py runs it, in the CudaForge folder's import path; argv: ref, test, csv
CUDAFORGE_BENCH = """
import json, sys
from pathlib import Path
from utils.compile_and_run import compare_and_bench
r = compare_and_bench(Path(sys.argv[1]), Path(sys.argv[2]), warmup=5, repeat=20, tol=1e-4, log_dir=None)
print("RESULT " + json.dumps(r, default=str))
"""
CUDAFORGE_PROFILE = """
import sys
from run_ncu import profile_bench, load_ncu_metrics, metrics_to_prompt
csv = profile_bench(bench_py="bench_ref_inputs_0.py", out_csv=sys.argv[1])
print("PROFILED", csv, flush=True)
df = load_ncu_metrics(csv, extra_keep=("Kernel Name",), name_list=[sys.argv[2]], select="last")
print("METRICS", len(df.columns), "columns,", len(df), "rows")
print(metrics_to_prompt(df)[:400])
"""


def reference(rows: int, cols: int) -> str:
    """KernelBench's 25_Swish at the given size (the candidate file's own Model, for both tools)."""
    text = swish_file(rows, cols)
    return text[: text.index("cuda_source = ")]


def candidate(rows: int, cols: int, round_: int) -> str:
    return swish_file(rows, cols).replace("__global__ void swish_kernel", f"// round {round_}\n__global__ void swish_kernel", 1)


def ncu_wrapper(folder: Path) -> dict[str, str]:
    real = shutil.which("ncu")
    if real is None:
        return {}
    (folder / "bin").mkdir(exist_ok=True)
    wrapper = folder / "bin" / "ncu"
    wrapper.write_text(f'#!/bin/sh\nexec "{real}" --clock-control none "$@"\n')
    wrapper.chmod(0o755)
    return {"PATH": f"{wrapper.parent}{os.pathsep}{os.environ.get('PATH', '')}"}


def cudaforge_round(cudaforge: Path, work: Path, ref: str, test: str, env: dict[str, str]) -> tuple[float, bool, str]:
    """Seconds, whether it found the candidate correct, and what it said."""
    (work / "ref_0.py").write_text(ref)
    (work / "test_kernel_0.py").write_text(test)
    shutil.copy(cudaforge / "bench_ref_inputs_0.py", work / "bench_ref_inputs_0.py")
    env = {**os.environ, **env, "PYTHONPATH": f"{cudaforge}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
           "TORCH_EXTENSIONS_DIR": str(work.parent / "cudaforge-ext")}
    t0 = time.perf_counter()
    bench = subprocess.run([sys.executable, "-c", CUDAFORGE_BENCH, "ref_0.py", "test_kernel_0.py"], cwd=work,
                           env=env, capture_output=True, text=True)
    t_bench = time.perf_counter() - t0
    line = next((ln for ln in bench.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if bench.returncode != 0 or line is None:
        return t_bench, False, f"compare_and_bench failed: {(bench.stderr or bench.stdout).strip()[-400:]}"
    result = json.loads(line[len("RESULT "):])
    profile = subprocess.run([sys.executable, "-c", CUDAFORGE_PROFILE, str(work / "ncu.csv"), KERNEL], cwd=work,
                             env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    means = {k: round(v["avg"], 3) if isinstance(v := result.get(k), dict) and "avg" in v else v
             for k in ("ref_latency_ms", "test_latency_ms")}
    said = f"compare_and_bench {t_bench:.1f} s (mean ms: {means})"
    if profile.returncode != 0:
        error = (profile.stderr or profile.stdout).strip().splitlines()
        if "PROFILED" in profile.stdout:  # ncu ran and wrote its CSV; only CudaForge's reader of it raised
            return seconds, True, said + f"; ncu {seconds - t_bench:.1f} s, then load_ncu_metrics raised: " + (
                error[-1] if error else "?")
        return seconds, False, said + f"; profile_bench failed: {error[-1] if error else '?'}"
    metrics = next((ln for ln in profile.stdout.splitlines() if ln.startswith("METRICS")), "no metrics line")
    return seconds, True, f"{said}; ncu {seconds - t_bench:.1f} s, {metrics}"


def run_evaluator(reference_source: str) -> ProfilerEvaluator:
    """The evaluator `cudalens optimize` would make here (optimize_run.local_evaluator, its first slot), its
    worker starting now."""
    settings = ProfilerEvaluatorSettings(timeout_s=600.0)
    slot = devices_for(OptimizeSpec("reference.py", reference_source, evaluator=settings))[0]
    return local_evaluator(reference_source, settings, slot)


def cudalens_round(evaluator: ProfilerEvaluator, test: str) -> tuple[float, bool, str]:
    t0 = time.perf_counter()
    evaluation = evaluator.evaluate(test)
    seconds = time.perf_counter() - t0
    stages = ", ".join(f"{name} {secs:.1f} s" for name, secs in evaluation.stages)
    speed = f"{evaluation.speedup:.2f}×" if evaluation.speedup else "no speedup"
    counters = sum(len(p.metrics) for p in evaluation.profiles)
    said = f"{stages}; {speed}; {counters} ncu metrics; {'; '.join(evaluation.builds)}"
    if not evaluation.correct:
        log = evaluation.compile.log.strip().splitlines()
        why = evaluation.correctness.message or (log[-1] if log else "; ".join(evaluation.notes))
        said += f"; why: {why}"
    return seconds, evaluation.correct, said


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cudaforge", type=Path, default=ROOT / ".cudaforge")
    ap.add_argument("--rows", type=int, default=4096)
    ap.add_argument("--cols", type=int, default=393216)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    # the worker's warm-up and the test job's split (cudalens.profiler, cudalens.agents), as they come
    logging.basicConfig(level=logging.WARNING, format="   (log: %(message)s)", stream=sys.stdout)
    logging.getLogger("cudalens").setLevel(logging.INFO)
    needed = ("utils/compile_and_run.py", "run_ncu.py", "bench_ref_inputs_0.py")
    missing = [n for n in needed if not (args.cudaforge / n).is_file()]
    if missing:
        print(f"cudaforge_side_by_side: {args.cudaforge} lacks {', '.join(missing)} (a CudaForge checkout's files)",
              file=sys.stderr)
        return 2
    work_root = Path(tempfile.mkdtemp(prefix="cudalens-vs-cudaforge-"))
    env = ncu_wrapper(work_root)
    ref = reference(args.rows, args.cols)
    os.environ["TORCH_EXTENSIONS_DIR"] = str(work_root / "cudalens-ext")  # an empty build cache for round 1
    # and no fast build, precompiled header or bindings from earlier runs (worker/child/lib/fast_inline.py)
    os.environ["XDG_CACHE_HOME"] = str(work_root / "cache")
    evaluator: ProfilerEvaluator | None = None
    print(f"25_Swish {args.rows}×{args.cols}; CudaForge files from {args.cudaforge}; ncu: {env and 'clock-control none'}")
    ok = True
    try:
        for k in range(1, args.rounds + 1):
            test = candidate(args.rows, args.cols, k)
            work = work_root / f"cudaforge-round{k}"
            work.mkdir()
            cf_s, cf_ok, cf_said = cudaforge_round(args.cudaforge.resolve(), work, ref, test, env)
            if evaluator is None:
                # as `cudalens optimize` makes it, its worker started here (not during CudaForge's round): round 1
                # is a run's round 0
                evaluator = run_evaluator(ref)
            cl_s, cl_ok, cl_said = cudalens_round(evaluator, test)
            ok &= cf_ok and cl_ok
            ratio = f"cudalens {cf_s / cl_s:.1f}× faster (goal >= 8×)" if cf_ok and cl_ok else "not comparable"
            print(f"round {k} ({'cold' if k == 1 else 'new candidate'}): CudaForge {cf_s:.1f} s, cudalens {cl_s:.1f} s "
                  f"-> {ratio}")
            print(f"   CudaForge: {'correct' if cf_ok else 'FAILED'}; {cf_said}")
            print(f"   cudalens:  {'correct' if cl_ok else 'FAILED'}; {cl_said}")
    finally:
        if evaluator is not None:
            evaluator.close()
        shutil.rmtree(work_root, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
