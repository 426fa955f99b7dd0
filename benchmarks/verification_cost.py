"""What the verification protocol costs (issue 32: goal ≤ +10 %): the same two measurements on two trees of
cudalens, one before the checks and one after, alternated in one run on one GPU:

- save → verdict + timing after an edit, through the real language server (benchmarks/server_gpu_save.py);
- one profiled round of the loop at full size, 25_Swish 4096×393216 (benchmarks/full_size_rounds.py).

Each tree runs its own copy of those scripts, with `import cudalens` resolved to that tree alone (links in its
`cudalens/` folder to its parts, the tree on PYTHONPATH, nothing installed), so its server, worker and jobs are
its own. The extension caches are shared: the trees build the same kernels.

    python benchmarks/verification_cost.py --before DIR [--after .] [--alternations 2] [--rounds 3]

DIR: the earlier tree, e.g. `git archive 1fd24bf | tar -x -C .before`.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from cudalens import PARTS

EDIT_ROW = re.compile(r"^save → verdict \+ timing after an edit \(rebuild\)\s+([\d.]+)s\s+([\d.]+|-)s?")
WARM_ROW = re.compile(r"^save → verdict \+ timing, warm \(unchanged\)\s+([\d.]+)s\s+([\d.]+|-)s?")
ROUND = re.compile(r"^25_Swish round (\d+) \(([^)]*)\): ([\d.]+) s, (correct|FAILED)")


def importable(tree: Path) -> None:
    """`import cudalens.<part>` from `tree` alone: a link to each part in its `cudalens/` folder."""
    for part in PARTS:
        link = tree / "cudalens" / part
        if (tree / part).is_dir() and not link.exists():
            link.symlink_to(Path("..") / part)


def run(tree: Path, script: str, *args: str, timeout: float) -> tuple[str, float]:
    return run_in(tree, [f"benchmarks/{script}", *args], timeout=timeout)


def run_in(tree: Path, args: list[str], *, timeout: float) -> tuple[str, float]:
    """`python ARGS` in `tree` with `import cudalens` resolved there: its output and wall seconds."""
    path = os.pathsep.join(filter(None, (str(tree), os.environ.get("PYTHONPATH"))))  # the tree, then carried wheels
    env = {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}
    began = time.monotonic()
    proc = subprocess.run([sys.executable, *args], cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    return proc.stdout + proc.stderr, time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", default=".")
    parser.add_argument("--alternations", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--budget-s", type=float, default=540.0, help="stop starting new runs after this long")
    args = parser.parse_args()
    trees = {"before": Path(args.before).resolve(), "after": Path(args.after).resolve()}
    for tree in trees.values():
        importable(tree)
    edits: dict[str, list[float]] = {k: [] for k in trees}
    warms: dict[str, list[float]] = {k: [] for k in trees}
    rounds: dict[str, list[float]] = {k: [] for k in trees}
    started = time.monotonic()
    for alternation in range(args.alternations):
        for name, tree in trees.items():
            if time.monotonic() - started > args.budget_s:
                print(f"(stopping: past {args.budget_s:g} s)")
                break
            out, took = run(tree, "server_gpu_save.py", "--repeat", str(args.repeat), "--think", "0", timeout=300)
            for line in out.splitlines():
                if m := EDIT_ROW.match(line):
                    edits[name] += [float(m.group(1))] + ([float(m.group(2))] if m.group(2) != "-" else [])
                if m := WARM_ROW.match(line):
                    warms[name] += [float(m.group(1))]
            print(f"[{alternation}] {name} server_gpu_save {took:.0f} s:\n" + "\n".join(
                line for line in out.splitlines() if line.startswith("save →")), flush=True)
            out, took = run(tree, "full_size_rounds.py", "--problems", "25_Swish", "--rounds", str(args.rounds),
                            timeout=400)
            for line in out.splitlines():
                if (m := ROUND.match(line)) and int(m.group(1)) > 1 and m.group(4) == "correct":
                    rounds[name].append(float(m.group(3)))
            print(f"[{alternation}] {name} full_size_rounds {took:.0f} s:\n" + "\n".join(
                line for line in out.splitlines() if line.startswith("25_Swish")), flush=True)
    print("\n| measurement | before | after | change |\n|---|---|---|---|")
    for label, values in (("save → verdict after an edit (s, median)", edits),
                          ("save → verdict, warm (s, median)", warms),
                          ("profiled round, 25_Swish 4096×393216, rounds ≥ 2 (s, median)", rounds)):
        b, a = (statistics.median(values[k]) if values[k] else float("nan") for k in ("before", "after"))
        print(f"| {label} | {b:.2f} (n={len(values['before'])}) | {a:.2f} (n={len(values['after'])}) | "
              f"{(a / b - 1) * 100:+.0f} % |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
