"""Ray changes where a candidate runs, not its result (issue 17): the same candidates evaluated by the local
evaluator and in a Ray actor on a cluster, one after the other, side by side.

    python benchmarks/ray_same_results.py --ray 127.0.0.1:6390 [--problem 19_ReLU] [--cpu] [--count 6]

The candidates are the stand-in family's start, variants of it one axis at a time, and a wrong one
(benchmarks/search_standin.py). A search compares neither path's runs with the other's, so this is the check that
the Ray path can stand in for the local one: every verdict the same, every median within 3 % (on a GPU; on a
loaded CPU the medians are printed, not judged). Exit status 0 when that holds.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from search_standin import FAMILIES  # noqa: E402

from cudalens.agents.profiler_evaluator import ProfilerEvaluator, ProfilerEvaluatorSettings  # noqa: E402
from cudalens.agents.search.ray_backend import RayEvaluator, RaySettings, connect  # noqa: E402

TOLERANCE = 0.03


def candidates(family, count: int) -> list[tuple[str, str]]:
    out = [("start", family.source(family.start))]
    for axis, values in family.axes.items():
        for value in values:
            if value != family.start[axis] and len(out) < count - 1:
                out.append((f"{axis}={value}", family.source({**family.start, axis: value})))
    return [*out, ("wrong", family.source(family.start, "wrong"))]


def verdict(evaluation) -> tuple[str, float | None]:
    timing = evaluation.timing
    median = timing.candidate.median if evaluation.correct and timing is not None else None
    return ("correct" if evaluation.correct else evaluation.correctness.status), median


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ray", required=True, metavar="ADDRESS", help="the (loopback) cluster's address")
    ap.add_argument("--problem", default="19_ReLU", choices=sorted(FAMILIES))
    ap.add_argument("--cpu", action="store_true", help="the CPU family (row_sum_cpu), no GPU needed")
    ap.add_argument("--count", type=int, default=6, help="candidates, the wrong one included")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--budget-ms", type=float, default=100.0)
    args = ap.parse_args()
    family = FAMILIES["row_sum_cpu" if args.cpu else args.problem]
    settings = ProfilerEvaluatorSettings(device="cpu" if family.cpu else None, profile=False,
                                         timeout_s=args.timeout, budget_ms=args.budget_ms)
    cluster = RaySettings(args.ray, gpus_per_task=0 if family.cpu else 1, node_ip="127.0.0.1")
    slots = connect(cluster)
    local = ProfilerEvaluator(family.reference, settings)
    remote = RayEvaluator(family.reference, settings, cluster)
    print(f"{family.name}: {args.count} candidates, local then through Ray ({slots} slot(s) at {args.ray})")
    print(f"{'candidate':<14} {'local':>9} {'ray':>9} {'local ms':>9} {'ray ms':>9} {'diff':>7}")
    ok = True
    try:
        for label, source in candidates(family, args.count):
            (v1, m1), (v2, m2) = verdict(local.evaluate(source, "time")), verdict(remote.evaluate(source, "time"))
            diff = (m2 / m1 - 1) if m1 and m2 else None
            ok &= v1 == v2 and (family.cpu or diff is None or abs(diff) <= TOLERANCE)
            print(f"{label:<14} {v1:>9} {v2:>9} {m1 or float('nan'):>9.4f} {m2 or float('nan'):>9.4f} "
                  f"{f'{diff:+.1%}' if diff is not None else '-':>7}", flush=True)
    finally:
        local.close()
        remote.close()
    print("same verdicts" + ("" if family.cpu else f" and medians within {TOLERANCE:.0%}") if ok else "DIFFERENT")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
