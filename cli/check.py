"""`cudalens check [PATHS...]`: the static analysis of CUDA sources and of PyTorch files with inline CUDA.

Exit status: 0 when no finding reaches the failing level, 1 when one does, 2 for a usage or configuration
error (or when no file could be checked at all). A file the analyzer trips on gets a one-line error and the
others are still checked.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cudalens.analysis.config import SEVERITIES
from cudalens.cli.check_config import ConfigResolver, Overrides, parse_code_list
from cudalens.cli.check_run import CheckOutcome, check_stdin, run_checks
from cudalens.cli.file_check import FixMode, warn
from cudalens.cli.formats import RENDERERS
from cudalens.cli.formats.text import render as render_text
from cudalens.cli.main import UsageError
from cudalens.cli.profiler_hooks import load_hooks
from cudalens.cli.statistics import render_statistics
from cudalens.workspace.files import discover_files


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[Path(".")],
        metavar="PATH",
        help="files or folders to check (default: the current folder); '-' reads standard input",
    )
    parser.add_argument(
        "--stdin-filename",
        default="stdin.cu",
        metavar="NAME",
        help="the name of the text read from '-' (its suffix picks the language; default stdin.cu)",
    )
    parser.add_argument("--format", choices=sorted(RENDERERS), default="text", help="output format")
    parser.add_argument(
        "--select",
        type=parse_code_list,
        metavar="CODES",
        help="comma-separated codes or prefixes to enable (replaces the configured selection)",
    )
    parser.add_argument(
        "--ignore", type=parse_code_list, metavar="CODES", help="comma-separated codes or prefixes to disable"
    )
    parser.add_argument(
        "--extend-select",
        type=parse_code_list,
        default=(),
        metavar="CODES",
        help="codes or prefixes to enable on top of the selection",
    )
    parser.add_argument(
        "--exclude",
        type=lambda v: tuple(p for p in v.split(",") if p.strip()),
        metavar="GLOBS",
        help="comma-separated glob patterns of paths to skip",
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="a pyproject.toml or TOML file to take settings from instead of the nearest one",
    )
    parser.add_argument(
        "--fail-level",
        choices=SEVERITIES,
        help="exit 1 only for findings at least this severe (default: warning)",
    )
    parser.add_argument(
        "--min-severity", choices=SEVERITIES, help="report only findings at least this severe (default: info)"
    )
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument(
        "--statistics", action="store_true", help="count findings per rule instead of listing"
    )
    parser.add_argument("--output-file", type=Path, metavar="FILE", help="write the report here, not stdout")
    parser.add_argument(
        "--jobs",
        type=int,
        default=0,
        metavar="N",
        help="files checked in parallel (default: one per core, for 16 files or more)",
    )
    parser.add_argument("--fix", action="store_true", help="apply the safe fixes to the files")
    parser.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix or --diff, apply unsafe fixes too"
    )
    parser.add_argument(
        "--diff", action="store_true", help="print the fixes as a unified diff instead of writing them"
    )
    parser.add_argument("--compile", action="store_true", help="also compile with nvcc (CL8xx findings)")
    parser.add_argument(
        "--test", action="store_true", help="also run the correctness test on the GPU (CL9xx)"
    )


def _overrides(args: argparse.Namespace) -> Overrides:
    return Overrides(
        select=args.select,
        ignore=args.ignore,
        extend_select=args.extend_select,
        exclude=args.exclude,
        fail_level=args.fail_level,
        min_severity=args.min_severity,
    )


def _write(text: str, output_file: Path | None) -> None:
    if output_file is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    try:
        output_file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write {output_file}: {exc.strerror or exc}") from None


def _render(outcome: CheckOutcome, fmt: str, statistics: bool) -> str:
    if statistics:
        return render_statistics(outcome.findings, as_json=fmt == "json")
    if fmt == "text":
        return render_text(outcome.findings, fixed=outcome.fixed)
    return RENDERERS[fmt](outcome.findings)


def _fix_mode(args: argparse.Namespace) -> FixMode | None:
    if not (args.fix or args.diff):
        return None
    return FixMode(unsafe=args.unsafe_fixes, diff=args.diff)


def _files(args: argparse.Namespace, resolver: ConfigResolver) -> list[Path]:
    discovery = discover_files(args.paths, resolver.excluded)
    if discovery.missing:
        raise UsageError(f"{discovery.missing[0]}: no such file or folder")
    if not discovery.files:
        warn("cudalens: warning: no .cu, .cuh or .py files under the given paths")
    return discovery.files


def run(args: argparse.Namespace) -> int:
    cwd = Path.cwd().resolve()
    resolver = ConfigResolver(_overrides(args), args.config, cwd)
    fix = _fix_mode(args)
    stdin = [str(p) for p in args.paths] == ["-"]
    if stdin and fix is not None and not fix.diff:
        raise UsageError("--fix cannot rewrite standard input; use --diff")
    files = [] if stdin else _files(args, resolver)
    hooks = load_hooks(args.compile, args.test)
    if stdin:
        outcome = check_stdin(args.stdin_filename, resolver, hooks, fix)
    else:
        outcome = run_checks(files, resolver, hooks, cwd, fix, args.jobs)
    if (stdin or files) and outcome.checked == 0:
        return 2  # every file failed, each with its error line: "All checks passed!" would be a lie
    if fix is not None and fix.diff:
        _write(outcome.diffs, args.output_file)
        return 1 if outcome.diffs and not args.exit_zero else 0
    _write(_render(outcome, args.format, args.statistics), args.output_file)
    if args.exit_zero:
        return 0
    return 1 if outcome.failing else 0
