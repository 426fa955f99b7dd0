"""Checking one file: the analyzer's findings (and the profiler's, with --compile/--test), filtered by the
configuration and the suppression comments, and fixed when asked."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from cudalens.analysis.api import analyze_text
from cudalens.analysis.config import AnalysisConfig
from cudalens.analysis.findings import Finding, Severity
from cudalens.analysis.launch_index import LaunchIndex
from cudalens.analysis.rules.file_not_analysed import not_analysed
from cudalens.analysis.suppression import apply_suppressions, parse_suppressions
from cudalens.analysis.syntax_check import SyntaxBaseline
from cudalens.cli.escape import printable
from cudalens.cli.fixes import FixOutcome, apply_fixes, unified_diff
from cudalens.cli.profiler_hooks import ProfilerHooks
from cudalens.workspace.files import SourceText, load_source, read_source, write_source
from cudalens.workspace.includes import DiskIncludes


def warn(message: str) -> None:
    """One line on stderr; CI logs read stderr for workflow commands too, so the repository's text is escaped."""
    print(printable(message), file=sys.stderr)


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


def findings_of(job: FileJob, text: str, hooks: ProfilerHooks, first_pass: bool = True,
                launches: LaunchIndex | None = None) -> list[Finding]:
    """The findings of one text that survive selection and suppression comments (`launches`: the launch
    sites of the other files checked)."""
    config, shown = job.config, job.shown
    includes = includes_for(job)
    report = analyze_text(shown, text, config, includes, launches)
    for error in report.errors:  # a kernel the analyzer could not handle; the others were analysed
        warn(f"cudalens: error: {error}")
    if first_pass:
        for name in includes.skipped:
            warn(f"cudalens: warning: {shown}: #include \"{printable(name)}\" is outside the workspace and its "
                 "include folders: not read")
    if not report.is_cuda:
        return []
    if first_pass:
        _warn_unknown_codes(text, shown)
    findings = list(report.findings)
    try:
        findings += hooks.findings(shown, text, config)
    except Exception as exc:  # a broken compile/test run must not hide the static findings
        warn(f"cudalens: error: {shown}: --compile/--test failed: {type(exc).__name__}: {exc}")
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
            warn(
                f"{shown}:{suppression.line}: cudalens: warning: '{entry}' in a suppression is not a rule code"
            )


def includes_for(job: FileJob) -> DiskIncludes:
    """The headers a check may read: under the folder it runs in, the checked file's own folder and the include
    folders (CI checks untrusted pull requests: nothing else of the machine may reach a finding)."""
    return DiskIncludes(job.config.include_dirs, roots=(str(Path.cwd()), str(Path(job.path).parent)))


def check_file(
    job: FileJob, hooks: ProfilerHooks, fix: FixMode | None = None, source: SourceText | None = None,
    launches: LaunchIndex | None = None,
) -> FileResult:
    """One file's findings (`source`: its text when it does not come from disk), fixed if asked."""
    source = source or load_source(job.path)
    if source.undecodable is not None:  # a finding, not a pass: the check must not say this file is fine
        finding = not_analysed(job.shown, source.undecodable, Severity.WARNING)
        return FileResult([finding] if _keep(finding, job.config) else [])
    findings = findings_of(job, source.text, hooks, launches=launches)
    if fix is None:
        return FileResult(findings)
    outcome = apply_fixes(source.text, [f for f in findings if f.path == job.shown], fix.unsafe)
    if not outcome.fixed:
        return FileResult(findings)
    if not source.lossless:
        warn(f"cudalens: warning: {job.shown}: not fixed, the file is not valid {source.encoding.upper()}")
        return FileResult(findings)
    after = findings_of(job, outcome.text, hooks, first_pass=False, launches=launches)
    if (why := refused(job, source.text, outcome, findings, after)) is not None:
        warn(f"cudalens: warning: {job.shown}: not fixed: {why}")
        return FileResult(findings)
    if fix.diff:
        return FileResult(findings, len(outcome.fixed), unified_diff(job.shown, source.text, outcome.text))
    write_source(job.path, source, outcome.text)
    return FileResult(after, len(outcome.fixed))


def refused(job: FileJob, text: str, outcome: FixOutcome, before: list[Finding], after: list[Finding]) -> str | None:
    """Why the fixed text must not be written, or None: each written fix is checked as the server checks an
    offered edit (the file parses no worse than before) and must have removed its finding."""
    if not SyntaxBaseline(text, str(job.path)).accepts(outcome.text):
        return "the fixed file would not parse"
    had = Counter((f.code, f.kernel) for f in before if f.path == job.shown)
    left = Counter((f.code, f.kernel) for f in after if f.path == job.shown)
    for (code, kernel), n in Counter((f.code, f.kernel) for f in outcome.fixed).items():
        if left[(code, kernel)] > had[(code, kernel)] - n:
            return f"the fix of {code}{f' in {kernel}' if kernel else ''} did not remove its finding"
    return None


def describe_error(exc: Exception, path: Path) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        # name the file when it is not the one being checked (a resource of ours, a header)
        other = exc.filename is not None and Path(exc.filename) != path
        return f"{exc.strerror}: {exc.filename}" if other else exc.strerror
    return f"{type(exc).__name__}: {exc}"
