"""`cudalens check` over a whole repository, as pre-commit and CI run it: wall time from the command's start to its
exit (the interpreter's start and imports included), median of `--runs`. Goal (issue 35): a 100-file repository in
≤ 10 s on two cores.

The repository is the labelled library corpus's hand-written libraries (the sets named "hand-written" in
benchmarks/accuracy/libraries.json, fetched by `library_corpus.py fetch`; not the LLM-written set nor the race
suites' generated programs): their first `--files` files in path order, copied into one temporary folder with their
folders kept, so includes between them resolve as in the repository.

Run: python benchmarks/check_repository.py [--files 100] [--runs 3] [--jobs 0]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "benchmarks" / "accuracy" / "libraries"
MANIFEST = ROOT / "benchmarks" / "accuracy" / "libraries.json"
SUFFIXES = {".cu", ".cuh", ".h", ".hpp", ".cpp", ".py"}


def corpus_files(limit: int) -> list[Path]:
    hand_written = {entry["repo"].replace("/", "+") for entry in json.loads(MANIFEST.read_text())["repos"]
                    if entry["set"].startswith("hand-written")}
    files = sorted(p for p in CORPUS.rglob("*") if p.is_file() and p.suffix in SUFFIXES
                   and p.relative_to(CORPUS).parts[0] in hand_written)
    return files[:limit]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=0, help="cudalens check --jobs (0: one per core)")
    args = parser.parse_args(argv)
    files = corpus_files(args.files)
    if len(files) < args.files:
        print(f"only {len(files)} files under {CORPUS}: run benchmarks/accuracy/library_corpus.py fetch first")
        return 2
    with tempfile.TemporaryDirectory(prefix="cudalens-repo-") as tmp:
        repo = Path(tmp)
        for path in files:
            target = repo / path.relative_to(CORPUS)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        lines = sum(p.read_bytes().count(b"\n") for p in files)
        command = [sys.executable, "-m", "cudalens", "check", str(repo), "--jobs", str(args.jobs), "--statistics"]
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            done = subprocess.run(command, capture_output=True, text=True, cwd=repo)
            times.append(time.perf_counter() - start)
            if done.returncode not in (0, 1):  # 1: findings at the fail level
                print(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else f"exit {done.returncode}")
                return 2
    print(f"{len(files)} files, {lines:,} lines, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    print(f"cudalens check: median {statistics.median(times):.2f} s (runs: "
          f"{', '.join(f'{t:.2f}' for t in times)}; goal ≤ 10 s on two cores)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
