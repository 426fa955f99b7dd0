"""Issue 39's table, before and after, in one run on one GPU: two trees of cudalens (verification_cost.py's way:
each tree's own scripts with `import cudalens` resolved to it, the extension caches shared), each step on the
earlier tree and then on this one.

1. `cudalens test transpose.cu --time` from a terminal, caches warm: plain on both trees, and `--warm` on this
   one (its first command starts the session's warm worker, the later ones reuse it);
2. benchmarks/search_standin.py: the tree search at width 8 on 19_ReLU, 10 s a reply, with its timing check (the
   best candidate timed alone, goal within 3 %) and where the time went (how busy the GPU was);
3. benchmarks/server_gpu_save.py with fresh caches: the first save right after the server starts, a save after
   an edit, per-line ncu hints after an edit (back to back, then 2 s apart);
4. this tree only, as the budget allows: the search again with `--profile-ahead` (candidates profiled while the
   GPU is idle), and benchmarks/build_ahead_workers.py (a build ahead, a fresh process against a warm worker).

    python benchmarks/issue39_figures.py --before .before [--after .] [--budget-s 540] [--evaluations 16]

Each step prints as it ends; a step that would start past `--budget-s` is skipped, and the table at the end says
which figures it has.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from verification_cost import importable, run_in

CU = "tests/runtime/data/transpose.cu"
SAVE_ROW = re.compile(r"^(save → .*?)\s+([\d.]+)s\s+([\d.]+s|-)")
SEARCH_ROW = re.compile(r"^19_ReLU\s+tree\s+(\S+)\s+(\d+)\s+\d+\s+\d+\s+\d+\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")


def stop_warm_servers(tree: Path) -> None:
    """The warm servers `cudalens test --warm` started from `tree` (they hold a CUDA context: not beside a timing)."""
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"cudalens.worker.warm" in argv:
            try:
                os.kill(int(proc.name), signal.SIGTERM)
            except OSError:
                pass
    time.sleep(1.0)


def cli_seconds(tree: Path, *flags: str, runs: int = 2) -> list[float]:
    """Wall seconds of `cudalens test CU --time FLAGS`, after one run that warms the caches (or the warm worker)."""
    times = []
    for i in range(runs + 1):
        out, took = run_in(tree, ["-m", "cudalens", "test", CU, "--time", *flags], timeout=300)
        if i:
            times.append(took)
        if "passed" not in out:
            print(f"  ({tree.name} cudalens test {' '.join(flags)}: {out.strip().splitlines()[-1:]})", flush=True)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default=".")
    parser.add_argument("--budget-s", type=float, default=540.0)
    parser.add_argument("--evaluations", type=int, default=16, help="the search's candidates (requests) per tree")
    args = parser.parse_args()
    trees = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    for tree in trees.values():
        importable(tree)
    began = time.monotonic()
    table: dict[str, dict[str, str]] = {}

    def put(row: str, side: str, value: str) -> None:
        table.setdefault(row, {})[side] = value

    def within(step: str, need: float) -> bool:
        left = args.budget_s - (time.monotonic() - began)
        if left < need:
            print(f"=== {step} skipped: {left:.0f} s of the budget left", flush=True)
        return left >= need

    def step(name: str, side: str, call, *a, timeout: float) -> str | None:
        try:
            out, took = call(*a, timeout=timeout)
        except subprocess.TimeoutExpired:
            print(f"=== {name} ({side}) ran past {timeout:g} s", flush=True)
            return None
        print(f"=== {name} ({side}, {took:.0f} s)", flush=True)
        return out

    # 1. the CLI, caches warm
    if within("cudalens test --time", 60):
        for side, tree in trees.items():
            plain = cli_seconds(tree)
            put("`cudalens test --time` from the terminal, warm (s)", side, " ".join(f"{t:.2f}" for t in plain))
            print(f"=== cudalens test --time ({side}): {plain}", flush=True)
        warm = cli_seconds(trees["after"], "--warm")
        put("`cudalens test --time --warm`, the session's later commands (s)", "after", " ".join(f"{t:.2f}" for t in warm))
        print(f"=== cudalens test --time --warm (after): {warm}", flush=True)
        stop_warm_servers(trees["after"])

    # 2. the search
    def search(side: str, tree: Path, extra: list[str]) -> None:
        if not within(f"search_standin ({side})", 100):
            return
        out = step("search_standin", side, run_in, tree,
                   ["benchmarks/search_standin.py", "--problems", "19_ReLU", "--policies", "tree", "--evaluations",
                    str(args.evaluations), "--width", "8", "--llm-seconds", "10", "--timeout", "120",
                    "--timing-check", *extra],
                   timeout=min(200.0, max(60.0, args.budget_s - (time.monotonic() - began))))
        for line in (out or "").splitlines():
            if m := SEARCH_ROW.match(line):
                put("search, tree, width 8, 10 s a reply: candidates/min (after round 0)", side,
                    f"{m.group(4)} ({m.group(5)}), best {m.group(1)}")
            if "timing:" in line:
                put("the best candidate under the search / alone", side, line.split("timing:", 1)[1].strip())
            if line.strip().startswith(("19_ReLU", "time:", "timing:")):
                print("  " + line.strip(), flush=True)

    search("before", trees["before"], [])
    search("after", trees["after"], [])

    # 3. the server: first save with fresh caches, after an edit, per-line ncu hints
    for side, tree in trees.items():
        if not within(f"server_gpu_save ({side})", 80):
            continue
        out = step("server_gpu_save", side, run_in, tree,
                   ["benchmarks/server_gpu_save.py", "--repeat", "1", "--think", "2", "--fresh-cache"], timeout=200)
        for line in (out or "").splitlines():
            if m := SAVE_ROW.match(line):
                put(m.group(1).strip() + " (s: first, later)", side, f"{m.group(2)}, {m.group(3)}")
                print("  " + line, flush=True)

    # the search again on this tree, its candidates profiled while the GPU is idle (opt-in until measured)
    search("after, --profile-ahead", trees["after"], ["--profile-ahead"])

    # 4. the build ahead, both ways, on this tree
    if within("build_ahead_workers", 60):
        out = step("build_ahead_workers", "after", run_in, trees["after"],
                   ["benchmarks/build_ahead_workers.py", "--count", "8", "--at-once", "8"], timeout=150)
        for line in (out or "").splitlines():
            print("  " + line, flush=True)
            if "median" in line:
                put(f"build ahead of a 19_ReLU variant, eight at once: {line.split(' median')[0].strip()} (s)",
                    "after", line.split("median", 1)[1].split("s a candidate")[0].strip())

    sides = ["before", "after", "after, --profile-ahead"]
    print(f"\n| figure | {' | '.join(sides)} |\n|---|---|---|---|")
    for row, values in table.items():
        print(f"| {row} | {' | '.join(values.get(side, '–') for side in sides)} |")
    medians = {k: v for k, v in table.get("`cudalens test --time` from the terminal, warm (s)", {}).items()}
    if medians:
        print("(cudalens test medians: " + ", ".join(
            f"{k} {statistics.median(float(x) for x in v.split()):.2f} s" for k, v in medians.items()) + ")")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
