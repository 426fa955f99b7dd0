"""The Judge's accuracy on kernels whose cause is known: each case file (KernelBench-style: `Model` is the
reference, `ModelNew` the kernel) is evaluated like a round of the optimize loop (compile resources, ≥ 5 trials,
timing, Nsight Compute), judged, and the verdict's bottleneck and first method compared with the known cause.

    python benchmarks/judge_suite/run.py [--out DIR] [--only 01,05] [--predicted]

Prints one row per case, then the confusion table (known cause × the method the Judge chose) and the share right
over every case whose result is in DIR — so two calls with `--only` halves (each inside a 10-minute limit) end
with the whole table. Goal ≥ 90 %. `--predicted` judges from static analysis alone (no GPU: the predicted
verdicts). Exit 0 when the goal is met. DIR/<case>.json holds each verdict with its evidence and facts.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from cudalens.agents.gpu_specs import DEFAULT_GPU, detect_gpu_specs  # noqa: E402
from cudalens.agents.judge import Verdict, judge, judge_input  # noqa: E402
from cudalens.analysis.api import analyze_text  # noqa: E402

HERE = Path(__file__).resolve().parent
GOAL = 0.9


@dataclass(frozen=True)
class Case:
    file: str
    cause: str
    kernel: str
    method: str  # the first fix for the cause
    bottlenecks: tuple[str, ...]  # the bottleneck names that describe the cause


CASES = (
    Case("01_uncoalesced_transpose.py", "uncoalesced", "transpose_strided", "coalesce-global-access",
         ("memory", "latency")),
    Case("02_bank_conflicted_transpose.py", "bank-conflicted", "transpose_shared", "pad-shared-memory",
         ("memory", "latency")),
    Case("03_occupancy_registers.py", "occupancy: registers", "horner_registers", "reduce-register-pressure",
         ("occupancy",)),
    Case("04_occupancy_shared.py", "occupancy: shared memory", "horner_tiled", "reduce-shared-memory",
         ("occupancy",)),
    Case("05_latency_tiny_grid.py", "latency: tiny grid", "row_sum", "increase-parallelism", ("latency",)),
    Case("06_compute_bound_sgemm.py", "compute-bound", "sgemm_register_tiled", "use-tensor-cores", ("compute",)),
    Case("07_divergent.py", "divergent", "two_polynomials", "remove-warp-divergence", ("compute", "latency")),
    Case("08_atomics_one_address.py", "atomics on one address", "count_positive", "use-warp-shuffles",
         ("memory", "latency")),
    Case("09_launch_overhead.py", "launch overhead", "add_one", "fuse-kernel-launches", ("latency",)),
)


def verdict_for(case: Case, predicted: bool, timeout_s: float) -> tuple[Verdict, dict]:
    path = HERE / case.file
    text = path.read_text(encoding="utf-8")
    report = analyze_text(str(path), text)
    info = next((k for k in report.kernels if k.name == case.kernel), None)
    own = tuple(f for f in report.findings if f.kernel == case.kernel)
    facts: dict = {"findings": sorted({f.code for f in own})}
    if predicted:
        from cudalens.agents.resources import compile_resources

        resources, note = compile_resources(str(path), text)
        facts["resources"] = note or "ptxas"
        evaluation = None
        if resources:
            from cudalens.agents.evaluation import CompileOutcome, CorrectnessOutcome, Evaluation

            evaluation = Evaluation("", CompileOutcome(True, kernels=resources), CorrectnessOutcome("not_run"))
        inp = judge_input(evaluation, case.kernel, own, info, gpu=DEFAULT_GPU)
        return judge(inp), facts
    from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings
    from cudalens.agents.resources import WithCompileResources

    evaluator = ProfilerEvaluator(text, ProfilerEvaluatorSettings(timeout_s=timeout_s, ncu_standby=False))
    try:
        evaluation = WithCompileResources(evaluator, str(path)).evaluate(text, "full")
    finally:
        evaluator.close()
    facts.update(correct=evaluation.correct, notes=list(evaluation.notes),
                 profiled=[p.kernel for p in evaluation.profiles], speedup=evaluation.speedup)
    return judge(judge_input(evaluation, case.kernel, own, info, gpu=detect_gpu_specs())), facts


def confusion(rows: list[dict]) -> str:
    methods = sorted({r["method"] or "none" for r in rows} | {r["expected"] for r in rows})
    width = max(len(r["cause"]) for r in rows)
    head = " " * width + " | " + " | ".join(f"{i + 1:>2}" for i in range(len(methods)))
    lines = [head, "-" * len(head)]
    counts = Counter((r["cause"], r["method"] or "none") for r in rows)
    for cause in dict.fromkeys(r["cause"] for r in rows):
        lines.append(f"{cause:<{width}} | " + " | ".join(f"{counts[(cause, m)] or '.':>2}" for m in methods))
    lines += ["", *(f"{i + 1:>2} = {m}" for i, m in enumerate(methods))]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("/tmp/cudalens-judge-suite"))
    parser.add_argument("--only", default="", help="comma-separated case number prefixes (01,05)")
    parser.add_argument("--predicted", action="store_true", help="static verdicts only (no GPU)")
    parser.add_argument("--timeout", type=float, default=300.0, help="per case, seconds")
    args = parser.parse_args(argv)
    wanted = [c for c in CASES if not args.only or c.file.split("_")[0] in args.only.split(",")]
    if not args.predicted:  # the extensions built in parallel first: each case's round then finds its build
        from cudalens.profiler.prebuild import prebuild

        for b in prebuild([str(HERE / c.file) for c in wanted], timeout=args.timeout):
            print(f"built {Path(b.path).name} in {b.seconds:.0f} s" + ("" if b.ok else f": FAILED {b.message}"))
    rows = []
    for case in wanted:
        started = time.perf_counter()
        try:
            v, facts = verdict_for(case, args.predicted, args.timeout)
        except Exception as exc:  # one case that cannot run is a wrong answer, not the end of the table
            v, facts = None, {"error": f"{type(exc).__name__}: {exc}"}
        row = {
            "case": case.file, "cause": case.cause, "expected": case.method, "method": v.method if v else None,
            "bottleneck": v.bottleneck if v else None, "status": v.status if v else "error",
            "right": bool(v and v.method == case.method),
            "bottleneck_right": bool(v and v.bottleneck in case.bottlenecks),
            "seconds": round(time.perf_counter() - started, 1), "facts": facts,
            "verdict": v.to_json() if v else None,
        }
        rows.append(row)
        mark = "ok " if row["right"] else "BAD"
        print(f"{mark} {case.file:<34} {v.status if v else 'error':<9} {row['bottleneck'] or '-':<10} "
              f"{row['method'] or facts.get('error', '-'):<26} (expected {case.method}) {row['seconds']:.0f} s",
              flush=True)
        if v is not None:
            for e in v.evidence:
                print(f"      {e.shown()}: {e.meaning}", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    for row in rows:
        (args.out / f"{Path(row['case']).stem}.json").write_text(json.dumps(row, indent=2, default=str))
    known = {c.file for c in CASES}
    rows = [json.loads(p.read_text()) for p in sorted(args.out.glob("*.json"))]
    rows = [r for r in rows if r.get("case") in known]
    right = sum(r["right"] for r in rows)
    share = right / len(rows) if rows else 0.0
    print()
    print(confusion(rows))
    print(f"\nmethod right: {right}/{len(rows)} = {share:.0%} (goal {GOAL:.0%}); bottleneck right: "
          f"{sum(r['bottleneck_right'] for r in rows)}/{len(rows)}"
          + (" — predicted verdicts (no GPU)" if args.predicted else ""))
    return 0 if share >= GOAL else 1


if __name__ == "__main__":
    sys.exit(main())
