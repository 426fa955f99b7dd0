"""`cudalens validate PATH...`: runs the static analyzer and ncu/compute-sanitizer on the same files and prints,
per category, how often the static hints and the hardware agree (precision and recall)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from cudalens.cli.gpu_options import add_common_arguments
from cudalens.cli.progress import StageProgress
from cudalens.profiler.validate import summarize, validate_file


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="+", help=".cu files (with references) or folders of them")
    parser.add_argument("--no-racecheck", action="store_true", help="skip compute-sanitizer racecheck")
    parser.add_argument("--no-cache", action="store_true", help="profile even files whose profile is cached")
    add_common_arguments(parser, timeout=300.0, reference=False)


def expand(paths: list[str]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        out += sorted(p.rglob("*.cu")) if p.is_dir() else [p]
    return out


def run(args: argparse.Namespace) -> int:
    files = expand(args.paths)
    missing = [str(f) for f in files if not f.is_file()]
    if missing or not files:
        print(f"cudalens validate: no such file: {', '.join(missing) or ' '.join(args.paths)}", file=sys.stderr)
        return 2
    progress = StageProgress("validate")
    results = []
    try:
        for i, f in enumerate(files):
            progress(f.name, i / len(files))
            results.append(validate_file(
                str(f.resolve()), python=args.python, timeout=args.timeout,
                racecheck=not args.no_racecheck, use_cache=not args.no_cache,
            ))
    finally:
        progress.clear()
    report = summarize(results)
    if args.format == "json":
        print(json.dumps(report.to_json(), indent=2))
    else:
        for r in results:
            for note in r.notes:
                print(f"{r.path}: {note}")
        print(report.table())
    return 0
