"""`cudalens check [PATHS...]`: the static analysis of CUDA sources and of PyTorch files with inline CUDA.

Exit status: 0 when no finding reaches the failing level, 1 when one does, 2 for a usage or configuration
error (or when no file could be checked at all). A file the analyzer trips on gets a one-line error and the
others are still checked.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from cudalens.analysis.api import analyze_text
from cudalens.analysis.config import SEVERITIES, AnalysisConfig
from cudalens.analysis.files import (
    SourceText,
    decode_source,
    discover_files,
    include_reader,
    load_source,
    read_source,
    write_source,
)
from cudalens.analysis.findings import Finding, Severity, sort_key
from cudalens.analysis.suppression import apply_suppressions, parse_suppressions
from cudalens.cli.check_config import ConfigError, ConfigResolver, Overrides, parse_code_list
from cudalens.cli.fixes import apply_fixes, unified_diff
from cudalens.cli.formats import RENDERERS
from cudalens.cli.formats.text import render as render_text
from cudalens.cli.main import UsageError
from cudalens.cli.profiler_hooks import ProfilerHooks, load_hooks
from cudalens.cli.progress import Progress
from cudalens.cli.statistics import render_statistics


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


@dataclass
class CheckOutcome:
    findings: list[Finding] = field(default_factory=list)
    failing: int = 0  # findings at or above their file's failing level
    checked: int = 0  # files analysed without an internal error
    errors: int = 0
    fixed: int = 0
    diffs: str = ""


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


def _display_path(path: Path, cwd: Path) -> str:
    """Relative to the current folder where it lies under it (as ruff prints), else as given."""
    try:
        return path.resolve().relative_to(cwd).as_posix()
    except ValueError:
        return str(path)


def _keep(finding: Finding, config: AnalysisConfig) -> bool:
    return config.enabled(finding.code) and finding.severity.rank >= Severity(config.min_severity).rank


@dataclass(frozen=True)
class FileJob:
    path: Path
    shown: str  # the path as reports print it
    config: AnalysisConfig


@dataclass(frozen=True)
class FixMode:
    unsafe: bool = False  # also apply fixes that need a person's eye
    diff: bool = False  # show the change instead of writing it


@dataclass
class FileResult:
    findings: list[Finding]
    fixed: int = 0
    diff: str = ""


def findings_of(job: FileJob, text: str, hooks: ProfilerHooks, first_pass: bool = True) -> list[Finding]:
    """The findings of one text that survive selection and suppression comments."""
    config, shown = job.config, job.shown
    report = analyze_text(shown, text, config, include_reader(config.include_dirs))
    if not report.is_cuda:
        return []
    if first_pass:
        _warn_unknown_codes(text, shown)
    findings = list(report.findings)
    try:
        findings += hooks.findings(shown, text, config)
    except Exception as exc:  # a broken compile/test run must not hide the static findings
        _warn(f"cudalens: error: {shown}: --compile/--test failed: {type(exc).__name__}: {exc}")
    findings = [f if f.path else f.with_path(shown) for f in findings if _keep(f, config)]
    kept = apply_suppressions(text, [f for f in findings if f.path == shown], shown)
    # findings placed in an #include'd header are suppressed by that header's comments
    others: dict[str, list[Finding]] = {}
    for f in findings:
        if f.path != shown:
            others.setdefault(f.path, []).append(f)
    for header, in_header in others.items():
        try:
            kept += apply_suppressions(read_source(Path(header)), in_header, header)
        except OSError:
            kept += in_header
    return kept


def _warn_unknown_codes(text: str, shown: str) -> None:
    for suppression in parse_suppressions(text, shown):
        for entry in suppression.unknown:
            _warn(
                f"{shown}:{suppression.line}: cudalens: warning: '{entry}' in a suppression is not a rule code"
            )


def check_file(
    job: FileJob, hooks: ProfilerHooks, fix: FixMode | None = None, source: SourceText | None = None
) -> FileResult:
    """One file's findings (`source`: its text when it does not come from disk), fixed if asked."""
    source = source or load_source(job.path)
    findings = findings_of(job, source.text, hooks)
    if fix is None:
        return FileResult(findings)
    outcome = apply_fixes(source.text, [f for f in findings if f.path == job.shown], fix.unsafe)
    if not outcome.fixed:
        return FileResult(findings)
    if not source.lossless:
        _warn(f"cudalens: warning: {job.shown}: not fixed, the file is not valid UTF-8")
        return FileResult(findings)
    if fix.diff:
        return FileResult(findings, len(outcome.fixed), unified_diff(job.shown, source.text, outcome.text))
    write_source(job.path, source, outcome.text)
    return FileResult(findings_of(job, outcome.text, hooks, first_pass=False), len(outcome.fixed))


def _describe(exc: Exception, path: Path) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        # name the file when it is not the one being checked (a resource of ours, a header)
        other = exc.filename is not None and Path(exc.filename) != path
        return f"{exc.strerror}: {exc.filename}" if other else exc.strerror
    return f"{type(exc).__name__}: {exc}"


def _overrides(args: argparse.Namespace) -> Overrides:
    return Overrides(
        select=args.select,
        ignore=args.ignore,
        extend_select=args.extend_select,
        exclude=args.exclude,
        fail_level=args.fail_level,
        min_severity=args.min_severity,
    )


@dataclass(frozen=True)
class _Done:
    job: FileJob
    result: FileResult | None
    error: str | None


def _check_job(
    job: FileJob, hooks: ProfilerHooks, fix: FixMode | None, source: SourceText | None = None
) -> _Done:
    try:
        return _Done(job, check_file(job, hooks, fix, source), None)
    except Exception as exc:  # one file the analyzer trips on must not stop the others
        return _Done(job, None, _describe(exc, job.path))


# Below this many files a process pool costs more to start than it saves.
PARALLEL_MIN_FILES = 16


def _workers(jobs: int, files: int) -> int:
    if jobs > 0:
        return min(jobs, files)
    return min(os.cpu_count() or 1, 8, files) if files >= PARALLEL_MIN_FILES else 1


def _results(jobs: list[FileJob], hooks: ProfilerHooks, fix: FixMode | None, workers: int) -> Iterator[_Done]:
    if workers <= 1:
        for job in jobs:
            yield _check_job(job, hooks, fix)
        return
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(_check_job, job, hooks, fix) for job in jobs]
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # a worker process that died (killed, out of memory)
                job = jobs[futures.index(future)]
                yield _Done(job, None, f"worker failed: {type(exc).__name__}: {exc}")


def _collect(results: Iterable[_Done], progress: Progress) -> CheckOutcome:
    outcome = CheckOutcome()
    for done in results:
        progress.step(done.job.shown)
        if done.result is None:
            progress.clear()
            _warn(f"cudalens: error: {done.job.shown}: {done.error}")
            outcome.errors += 1
            continue
        result = done.result
        outcome.checked += 1
        outcome.findings += result.findings
        outcome.fixed += result.fixed
        outcome.diffs += result.diff
        threshold = Severity(done.job.config.fail_level).rank
        outcome.failing += sum(1 for f in result.findings if f.severity.rank >= threshold)
    progress.clear()
    outcome.findings.sort(key=sort_key)
    return outcome


def _run_checks(
    files: list[Path],
    resolver: ConfigResolver,
    hooks: ProfilerHooks,
    cwd: Path,
    fix: FixMode | None = None,
    jobs: int = 1,
) -> CheckOutcome:
    work = [FileJob(path, _display_path(path, cwd), resolver.config_for(path)) for path in files]
    return _collect(_results(work, hooks, fix, _workers(jobs, len(work))), Progress(len(work)))


def _check_stdin(
    name: str, resolver: ConfigResolver, hooks: ProfilerHooks, fix: FixMode | None
) -> CheckOutcome:
    """`cudalens check -`: the text on stdin, named (for its language, config and reports) by --stdin-filename."""
    job = FileJob(Path(name), name, resolver.config_for(Path(name).absolute()))
    source = decode_source(sys.stdin.buffer.read())
    return _collect([_check_job(job, hooks, fix, source)], Progress(1))


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


def run(args: argparse.Namespace) -> int:
    cwd = Path.cwd().resolve()
    try:
        resolver = ConfigResolver(_overrides(args), args.config, _warn, cwd)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    fix = _fix_mode(args)
    stdin = [str(p) for p in args.paths] == ["-"]
    if stdin and fix is not None and not fix.diff:
        raise UsageError("--fix cannot rewrite standard input; use --diff")
    files: list[Path] = []
    if not stdin:
        discovery = discover_files(args.paths, resolver.excluded)
        if discovery.missing:
            raise UsageError(f"{discovery.missing[0]}: no such file or folder")
        files = discovery.files
        if not files:
            _warn("cudalens: warning: no .cu, .cuh or .py files under the given paths")
    hooks = load_hooks(args.compile, args.test)
    for note in hooks.notes:
        _warn(note)
    if stdin:
        outcome = _check_stdin(args.stdin_filename, resolver, hooks, fix)
    else:
        outcome = _run_checks(files, resolver, hooks, cwd, fix, args.jobs)
    if (stdin or files) and outcome.checked == 0:
        _write(_render(outcome, args.format, args.statistics), args.output_file)
        return 2
    if fix is not None and fix.diff:
        _write(outcome.diffs, args.output_file)
        return 1 if outcome.diffs and not args.exit_zero else 0
    _write(_render(outcome, args.format, args.statistics), args.output_file)
    if args.exit_zero:
        return 0
    return 1 if outcome.failing else 0
