"""What a search's build ahead costs a candidate (issue 39): a fresh process per candidate (`prebuild_source`: a
Python start and torch's import, then the build) against a warm build worker (`BuildWorkers`: torch imported once,
a fork per candidate), `--count` distinct candidates each way, `--at-once` of them at a time as a search with that
many in flight builds them.

    python benchmarks/build_ahead_workers.py [--count 8] [--at-once 8] [--cpu]

On a GPU machine the candidates are the search stand-in's ReLU variants (real fast builds: kernels, glue, link);
`--cpu` (or no nvcc) builds KernelBench files without CUDA, so only what each way adds to a build shows. Each way
builds its own variants (a variant built once is cached), the fresh processes first.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from cudalens.profiler.prebuild import BuildWorkers, prebuild_source  # noqa: E402

CPU_FILE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x * {k}

class ModelNew(Model):
    pass

def get_inputs():
    return [torch.randn(8)]

def get_init_inputs():
    return []
'''


def variants(count: int, offset: int, cpu: bool) -> list[str]:
    if cpu:
        return [CPU_FILE.format(k=offset + i) for i in range(count)]
    from search_standin import FAMILIES

    family = FAMILIES["19_ReLU"]
    axes = [(b, v, n) for n in family.axes["items"] for v in family.axes["vec"] for b in family.axes["block"]]
    picked = axes[offset: offset + count]
    return [family.source({"block": b, "vec": v, "items": n}) for b, v, n in picked]


def timed(build, sources: list[str], at_once: int) -> tuple[list[float], int, float]:
    began = time.perf_counter()
    with ThreadPoolExecutor(max_workers=at_once) as pool:
        builds = list(pool.map(build, sources))
    wall = time.perf_counter() - began
    return [b.seconds for b in builds], sum(b.ok for b in builds), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=8)
    parser.add_argument("--at-once", type=int, default=8)
    parser.add_argument("--cpu", action="store_true")
    args = parser.parse_args()
    from cudalens.profiler.gpu_specs import gpu_count

    cpu = args.cpu or gpu_count() == 0
    print(f"build ahead, {args.count} distinct {'CPU KernelBench files' if cpu else '19_ReLU variants'}, "
          f"{args.at_once} at a time")
    fresh = timed(prebuild_source, variants(args.count, 0, cpu), args.at_once)
    builders = BuildWorkers(args.at_once)
    try:
        builders.build_source(variants(1, 10_000 if cpu else args.count * 2, cpu)[0])  # every worker up: one build
        for pool in builders.pools:
            pool.start()
        warm = timed(builders.build_source, variants(args.count, args.count, cpu), args.at_once)
    finally:
        builders.close()
    for name, (secs, ok, wall) in (("a fresh process each", fresh), ("warm build workers", warm)):
        print(f"{name:<22} median {statistics.median(secs):6.2f} s a candidate (min {min(secs):.2f}, max "
              f"{max(secs):.2f}), {ok}/{len(secs)} built, {wall:.1f} s for all")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
